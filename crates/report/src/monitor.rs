//! The server's side of a run (`--monitor`), in words: the headline
//! figures, the sources, and the diagnoses with their fixes. Shared by the
//! terminal summary, Markdown and HTML.

use crate::lang::{fill, tr, trf, Lang};
use stats::monitor::{Diagnosis, Monitoring, SourceState};

/// The figures line(s): CPU, load per CPU, CPU per request, connections, workers.
pub fn figures(m: &Monitoring, lang: Lang) -> Vec<String> {
    let f = &m.server;
    let mut first = Vec::new();
    if let (Some(mean), Some(max)) = (f.cpu_mean_pct, f.cpu_max_pct) {
        first.push(trf(
            lang,
            "CPU {}% mean, {}% max",
            &[&format!("{mean:.0}"), &format!("{max:.0}")],
        ));
    }
    if let Some(l) = f.load_per_cpu_max {
        first.push(trf(lang, "load {} per CPU at most", &[&format!("{l:.2}")]));
    }
    if let Some(ms) = f.cpu_ms_per_request {
        let src = f.cpu_source.as_deref().unwrap_or("");
        first.push(trf(
            lang,
            "{} ms CPU per request ({})",
            &[&format!("{ms:.3}"), &source_words(lang, src)],
        ));
    }
    let mut second = Vec::new();
    if let Some(c) = f.connections_max {
        second.push(trf(lang, "{} connections at most", &[&format!("{c:.0}")]));
    }
    if let (Some(b), Some(src)) = (f.workers_busy_max, f.workers_source.as_deref()) {
        let total = f
            .workers_total
            .map(|t| trf(lang, " of {}", &[&format!("{t:.0}")]))
            .unwrap_or_default();
        second.push(trf(
            lang,
            "{}: {} busy at most{}",
            &[&tr(lang, pool_name(src)), &format!("{b:.0}"), &total],
        ));
    }
    [first, second]
        .into_iter()
        .filter(|l| !l.is_empty())
        .map(|l| l.join(" · "))
        .collect()
}

fn pool_name(src: &str) -> &'static str {
    match src {
        "php-fpm processes" => "php-fpm processes",
        "Apache workers" => "Apache workers",
        _ => "workers",
    }
}

fn source_words(lang: Lang, src: &str) -> String {
    if lang == Lang::En {
        return src.to_string();
    }
    match src {
        "this machine's busy CPU minus yace's own" => "本机忙碌 CPU 减去 yace 自身".into(),
        s if s.starts_with("an estimate: this machine's busy CPU minus yace's own") => {
            "估算：本机忙碌 CPU 减去 yace 自身；其他所有进程都算作服务器的（用 --monitor pidfile:路径 只看这套服务）".into()
        }
        "the server machine's busy CPU" => "服务器机器的忙碌 CPU".into(),
        s => match s.strip_prefix("the CPU time of ") {
            Some(p) => format!("{p} 的 CPU 时间"),
            None => s.to_string(),
        },
    }
}

/// One line per source: what it watched, or why it was dropped; and from
/// when it was blind, when it was to the end.
pub fn sources(m: &Monitoring, lang: Lang) -> Vec<String> {
    m.sources
        .iter()
        .map(|s| {
            let line = match s.state {
                SourceState::Ok if s.failures == 0 => format!("{} — {}", s.spec, s.label),
                SourceState::Ok => trf(
                    lang,
                    "{} — {} ({} failed reads; last: {})",
                    &[
                        &s.spec,
                        &s.label,
                        &s.failures,
                        &s.error.as_deref().unwrap_or(""),
                    ],
                ),
                SourceState::Dropped => trf(
                    lang,
                    "{} — DROPPED: {}",
                    &[&s.spec, &s.error.as_deref().unwrap_or("")],
                ),
            };
            match s.blind() {
                Some((from, why)) => {
                    let from = format!("{from:.1}");
                    format!(
                        "{line}{}",
                        trf(lang, "; blind from {} s to the end ({})", &[&from, &why])
                    )
                }
                None => line,
            }
        })
        .collect()
}

/// What the diagnoses set aside, one line each ("ruled out …: why"). Where
/// a source was blind is said on its own line among the sources.
pub fn asides(m: &Monitoring, lang: Lang) -> Vec<String> {
    m.ruled_out
        .iter()
        .map(|x| {
            if lang == Lang::Zh {
                format!("已排除 {}：{}", x.code, x.why)
            } else {
                format!("ruled out {}: {}", x.code, x.why)
            }
        })
        .collect()
}

/// A diagnosis's message and fix in the reader's language.
pub fn diagnosis(d: &Diagnosis, lang: Lang) -> (String, String) {
    if lang == Lang::En {
        return (d.message.clone(), d.fix.clone());
    }
    let n = |k: &str| {
        d.figures
            .get(k)
            .map(|v| format!("{v:.0}"))
            .unwrap_or_default()
    };
    let mb = |k: &str| {
        d.figures
            .get(k)
            .map(|v| format!("{:.0}", v / 1048576.0))
            .unwrap_or_default()
    };
    let (m, f) = match d.code.as_str() {
        "fpm_max_children" => (
            {
                let q = d.figures.get("listen_queue_max").copied().unwrap_or(0.0);
                let queue = if q > 0.0 {
                    format!("（监听队列中最多 {q:.0} 个）")
                } else {
                    String::new()
                };
                let r = d.figures.get("max_children_reached").copied().unwrap_or(0.0);
                let reached = if r > 0.0 {
                    format!("；达到 pm.max_children {r:.0} 次")
                } else {
                    String::new()
                };
                fill(
                    "php-fpm 进程池已满：{} 个采样中有 {} 个没有空闲子进程，{} 个全都在忙{}；请求只能等待子进程{}。",
                    &[&n("samples"), &n("samples_full"), &n("processes"), &reached, &queue],
                )
            },
            match d.setting.as_ref().and_then(|s| Some((s.current?, s.suggested?))) {
                Some((now, to)) => format!(
                    "内存允许时把 pm.max_children 从 {now:.0} 调大到 {to:.0}（利特尔定律：速率 × 每个请求占用子进程的时间；子进程数 × 每个子进程的内存必须放得下），或者把慢页面变快。"
                ),
                None => "内存允许时调大进程池配置里的 pm.max_children（子进程数 × 每个子进程的内存必须放得下），或者把慢页面变快。".to_string(),
            },
        ),
        "accept_queue" => (
            fill(
                "连接在等待被接受：监听队列中最多有 {} 个连接；这个套接字后面的服务没有空闲的工作者。",
                &[&n("listen_queue_max")],
            ),
            "这个套接字后面的服务到了工作者或连接数的上限：用 --monitor pidfile:路径 或它的状态页看是哪一个，再调大那个上限。".to_string(),
        ),
        "apache_out_of_workers" => (
            fill(
                "Apache 在 {} 个采样中没有空闲的工作线程（最多 {} 个忙）：新请求要等工作线程空出来。",
                &[&n("samples_full"), &n("busy_max")],
            ),
            "内存和 CPU 允许时调大 MaxRequestWorkers（以及 ServerLimit；event/worker MPM 还有 ThreadsPerChild）；prefork 下每个工作者是一个进程。缩短 KeepAliveTimeout 可以释放被空闲连接占住的工作者。".to_string(),
        ),
        "server_cpu_saturated" => (
            fill(
                "服务器 CPU 已饱和：{} 个采样中有 {} 个忙碌度不低于 90%。",
                &[&n("samples"), &n("samples_saturated")],
            ),
            "瓶颈是 CPU：让每个请求更便宜（分析页面；PHP 请开启 OPcache），或者增加核数、服务器；加工作进程没有用。".to_string(),
        ),
        "listen_overflow" => (
            fill(
                "监听队列溢出：内核因监听套接字的 backlog 已满丢弃了 {} 个连接请求（溢出 {} 次）。",
                &[&n("listen_drops"), &n("listen_overflows")],
            ),
            "服务器接受连接的速度跟不上：调大监听 backlog（nginx `listen … backlog=N`、Apache ListenBacklog、php-fpm listen.backlog）以及 net.core.somaxconn；如果工作者全都在忙，那才是真正的上限。".to_string(),
        ),
        "nginx_dropped" => (
            fill(
                "nginx 接受了 {} 个连接但只处理了 {} 个：其余的因没有连接槽位而被立即关闭。",
                &[&n("accepts"), &n("handled")],
            ),
            "调大 nginx.conf 里的 worker_connections（以及 worker_rlimit_nofile）。".to_string(),
        ),
        "memory_low" => (
            fill(
                "内存紧张：最差的采样只有 {} MB 可用（共 {} MB）。",
                &[&mb("available_bytes_min"), &mb("total_bytes")],
            ),
            "减少或减轻工作者（每个 php-fpm 子进程或 Apache prefork 进程都占自己的内存），或者加内存；注意是否在用交换分区。".to_string(),
        ),
        "client_bound" => (
            fill(
                "瓶颈在客户端而不是服务器：yace 最忙的线程占用了 {}% 的 CPU，而服务器 CPU 并未饱和。",
                &[&format!(
                    "{:.0}",
                    d.figures.get("busiest_thread").copied().unwrap_or(0.0) * 100.0
                )],
            ),
            "给 yace 更多线程（-t）或核心，或者从多台机器施压（分片）；服务器还有余量。".to_string(),
        ),
        "time_wait" => (
            fill(
                "目标端口上的 TIME_WAIT 套接字最多堆积到 {} 个：每个关闭的连接要占住它的端口对 60 秒。",
                &[&n("time_wait_max")],
            ),
            "保持连接（HTTP/1.1 持久连接；ab 用 `-k`）以便复用；必须关闭连接的客户端可以设置 net.ipv4.tcp_tw_reuse=1 并扩大 net.ipv4.ip_local_port_range。".to_string(),
        ),
        _ => (d.message.clone(), d.fix.clone()),
    };
    (m, f)
}

/// What watching cost the client: the monitor threads' CPU over the run.
pub fn cost(m: &Monitoring, duration_s: f64, lang: Lang) -> Option<String> {
    let cpu: f64 = m.sources.iter().filter_map(|s| s.cpu_s).sum();
    if m.sources.iter().all(|s| s.cpu_s.is_none()) || duration_s <= 0.0 {
        return None;
    }
    Some(trf(
        lang,
        "watching cost this client {} CPU-s ({}% of one CPU)",
        &[
            &format!("{cpu:.3}"),
            &format!("{:.2}", 100.0 * cpu / duration_s),
        ],
    ))
}
