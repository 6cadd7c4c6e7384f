//! The harness itself: stacks never collide, logs clear, and dropping a
//! stack leaves no process behind.

use crate::client::{get_once, Conn};
use crate::harness::{processes, Stack, StackKind};
use std::collections::HashSet;

/// Processes (pid, name) still alive in the process groups of `pgids`.
fn alive_in(pgids: &[u32]) -> Vec<(i32, String)> {
    processes()
        .into_iter()
        .filter(|(_, _, pgrp)| pgids.contains(&(*pgrp as u32)))
        .map(|(pid, comm, _)| (pid, comm))
        .collect()
}

fn drop_leaves_nothing(kind: StackKind) {
    let stack = Stack::start(kind);
    let dir = stack.dir().to_path_buf();
    let pgids = stack.pids();
    let expected = if kind == StackKind::NginxStatic { 1 } else { 2 };
    assert_eq!(pgids.len(), expected, "{}: {pgids:?}", stack.name());
    let running = alive_in(&pgids);
    // Masters and their workers.
    assert!(
        running.len() > pgids.len(),
        "{}: only {running:?}",
        stack.name()
    );
    drop(stack);
    assert_eq!(alive_in(&pgids), vec![], "{kind:?}: left behind after drop");
    assert!(!dir.exists(), "{kind:?}: {} not removed", dir.display());
}

#[test]
fn drop_stops_nginx_apache() {
    drop_leaves_nothing(StackKind::NginxProxyApache);
}

#[test]
fn drop_stops_apache_php_fpm() {
    drop_leaves_nothing(StackKind::ApacheEventPhpFpm);
}

#[test]
fn parallel_stacks_get_their_own_ports_dirs_and_logs() {
    let stacks: Vec<Stack> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| s.spawn(|| Stack::start(StackKind::NginxStatic)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let urls: HashSet<String> = stacks.iter().map(|s| s.url("/")).collect();
    let dirs: HashSet<_> = stacks.iter().map(|s| s.dir().to_path_buf()).collect();
    assert_eq!((urls.len(), dirs.len()), (3, 3), "{urls:?} {dirs:?}");
    for (i, stack) in stacks.iter().enumerate() {
        let r = get_once(&stack.url("/"), &format!("/index.html?stack={i}"), &[]);
        assert_eq!(r.status, 200);
    }
    for (i, stack) in stacks.iter().enumerate() {
        let log = stack.wait_access_log(1);
        let paths: Vec<&str> = log.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, vec![format!("/index.html?stack={i}")], "stack {i}");
        assert_eq!(stack.backend_log(), None);
    }
}

#[test]
fn access_log_settles_and_clear_logs_empties_it() {
    let stack = Stack::start(StackKind::NginxProxyApache);
    let url = stack.url("/");
    let mut conn = Conn::open(&url);
    for i in 0..3 {
        assert_eq!(
            conn.get(&format!("/hello.php?phase=1&i={i}"), &[], false)
                .status,
            200
        );
    }
    drop(conn);
    assert_eq!(stack.access_log().len(), 3);
    assert_eq!(stack.backend_log().map(|l| l.len()), Some(3));

    stack.clear_logs();
    assert_eq!(stack.access_log(), vec![]);
    assert_eq!(stack.backend_log(), Some(vec![]));

    assert_eq!(get_once(&url, "/hello.php?phase=2", &[]).status, 200);
    let front = stack.access_log();
    let backend = stack.backend_log().unwrap();
    assert_eq!(
        front.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
        ["/hello.php?phase=2"]
    );
    assert_eq!(
        backend.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
        ["/hello.php?phase=2"]
    );
    let url_port = |u: &str| {
        u.rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches('/')
            .to_string()
    };
    assert_ne!(url_port(&url), url_port(&stack.backend_url("/").unwrap()));
}
