//! The dashboard drawn into a test buffer: what a frame shows, at every
//! size, with and without colours.

use super::*;
use crate::watch::tests::row;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn setup(shape: Shape) -> Setup {
    Setup {
        target: "GET http://127.0.0.1:8080/".into(),
        model: "open model: up to 200/s, at most 100 in flight, 2 threads".into(),
        threads: 2,
        duration_s: Some(30.0),
        requests: None,
        shape,
        monitors: 0,
        threads_flag: "-t",
        part: plan::Shard::WHOLE,
    }
}

fn text(t: &Terminal<TestBackend>) -> String {
    let b = t.backend().buffer();
    let mut out = String::new();
    for y in 0..b.area.height {
        for x in 0..b.area.width {
            out.push_str(b[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn render(s: &Screen, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| draw(f, s)).unwrap();
    text(&t)
}

fn watch(seconds: u64) -> Watch {
    let mut w = Watch::default();
    for s in 0..seconds {
        w.push(row(s, 200, u64::from(s == 3) * 5));
    }
    w
}

#[test]
fn a_full_screen_shows_charts_figures_errors_and_keys() {
    let st = setup(Shape::Open {
        stages: vec![(30.0, 200.0, 200.0)],
        max_inflight: 100,
    });
    let w = watch(12);
    let keys = Keys::default();
    let markers = [Marker {
        at_s: 5.0,
        note: "php-fpm restarted".into(),
    }];
    let s = Screen {
        setup: &st,
        watch: &w,
        elapsed_s: 12.4,
        markers: &markers,
        keys: &keys,
        stopping: false,
        look: Look { color: true },
        steered: None,
        server: &[],
    };
    let out = render(&s, 120, 36);
    for want in [
        "Responses/s: offered (planned) responses/s errors/s",
        "Latency (log scale): p50 p90 p99 max",
        "12s of 30s · 18s left",
        "responses/s   200",
        "offered       200/s",
        "reset",
        "the server reset the connection",
        "q stop and write the result",
        "1 marker(s), last at 5s: php-fpm restarted",
        "2xx 2,400",
        "responses     2,400",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }
}

#[test]
fn any_size_draws_without_panicking_down_to_one_cell() {
    let st = setup(Shape::Closed { connections: 50 });
    let w = watch(130);
    let mut keys = Keys::default();
    keys.press(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('m'),
            crossterm::event::KeyModifiers::NONE,
        ),
        3.0,
    );
    for color in [true, false] {
        let s = Screen {
            setup: &st,
            watch: &w,
            elapsed_s: 130.0,
            markers: &[],
            keys: &keys,
            stopping: false,
            look: Look { color },
            steered: None,
            server: &[],
        };
        for (wd, ht) in [
            (0, 0),
            (1, 1),
            (2, 5),
            (10, 2),
            (20, 4),
            (40, 10),
            (59, 17),
            (60, 18),
            (80, 24),
            (200, 60),
            (300, 8),
            (8, 100),
        ] {
            let out = render(&s, wd, ht);
            if wd >= 40 && ht >= 2 {
                assert!(out.contains("marker at 3s"), "{wd}x{ht}:\n{out}");
            }
        }
    }
}

#[test]
fn a_small_window_keeps_the_progress_and_the_keys() {
    let st = setup(Shape::Closed { connections: 50 });
    let w = watch(3);
    let keys = Keys::default();
    let s = Screen {
        setup: &st,
        watch: &w,
        elapsed_s: 3.0,
        markers: &[],
        keys: &keys,
        stopping: false,
        look: Look { color: false },
        steered: None,
        server: &[],
    };
    let out = render(&s, 50, 6);
    assert!(out.contains("3s of 30s"), "{out}");
    assert!(out.lines().last().unwrap().starts_with("q stop"), "{out}");
}

#[test]
fn saturation_and_lag_are_said_as_soon_as_a_second_shows_them() {
    let st = setup(Shape::Open {
        stages: vec![(30.0, 200.0, 200.0)],
        max_inflight: 100,
    });
    let mut w = watch(2);
    let mut busy = row(2, 200, 0);
    busy.client_cpu_s = 1.9; // two threads, 95% each
    busy.lag_p99_us = Some(25_000.0);
    w.push(busy);
    let keys = Keys::default();
    let s = Screen {
        setup: &st,
        watch: &w,
        elapsed_s: 3.2,
        markers: &[],
        keys: &keys,
        stopping: false,
        look: Look { color: true },
        steered: None,
        server: &[],
    };
    let warn = warnings(&s);
    assert!(
        warn[0].starts_with("CLIENT SATURATED: the worker threads were 95%"),
        "{warn:?}"
    );
    assert!(warn[0].contains("add threads (-t)"), "{warn:?}");
    assert!(
        warn[1].starts_with("SENDING LATE: p99 schedule lag 25"),
        "{warn:?}"
    );
    let out = render(&s, 120, 36);
    assert!(out.contains("CLIENT SATURATED"), "{out}");
    // The second before was fine: nothing said.
    let calm = watch(2);
    assert!(warnings(&Screen { watch: &calm, ..s }).is_empty());
}

#[test]
fn colours_follow_no_color_and_the_terminal() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
    };
    assert!(Look::from_env(env(&[("TERM", "xterm-256color")])).color);
    assert!(!Look::from_env(env(&[("TERM", "xterm-256color"), ("NO_COLOR", "1")])).color);
    assert!(Look::from_env(env(&[("TERM", "xterm"), ("NO_COLOR", "")])).color);
    assert!(!Look::from_env(env(&[("TERM", "vt100")])).color);
    assert!(!Look::from_env(env(&[("TERM", "xterm-mono")])).color);
}

#[test]
fn clocks_read_as_people_read_them() {
    assert_eq!(clock(0.4), "0s");
    assert_eq!(clock(59.6), "1m00s");
    assert_eq!(clock(125.0), "2m05s");
    assert_eq!(clock(3720.0), "1h02m");
}

#[test]
fn a_monitored_run_shows_the_server_now() {
    let mut st = setup(Shape::Closed { connections: 50 });
    st.monitors = 2;
    let w = watch(5);
    let keys = Keys::default();
    let lines = [
        ("server CPU".to_string(), "63% busy".to_string()),
        ("fpm busy".to_string(), "8/8 busy".to_string()),
    ];
    let frame = |server: &[(String, String)]| {
        render(
            &Screen {
                setup: &st,
                watch: &w,
                elapsed_s: 5.2,
                markers: &[],
                keys: &keys,
                stopping: false,
                look: Look { color: false },
                steered: None,
                server,
            },
            120,
            36,
        )
    };
    let out = frame(&lines);
    assert!(out.contains("server CPU    63% busy"), "{out}");
    assert!(out.contains("fpm busy      8/8 busy"), "{out}");
    // Before the monitors have two samples, the panel says so.
    assert!(frame(&[]).contains("server        reading…"));
}
