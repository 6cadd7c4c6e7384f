//! The server's side of a run (`--monitor`) on the page: its headline
//! figures and diagnoses by the verdict at the top, and under the load
//! charts a section with the sources and their charts.
//!
//! The charts are time charts like the load charts: x is seconds since the
//! run's start, the script gives every time chart the same span and one
//! cursor. Each source is drawn on its own sample times (`t`); a failed
//! sample is a `null`, drawn as a gap. A long run's samples are bucketed to
//! at most as many points as a load chart, each the highest sample of its
//! bucket, so a spike (a full listen queue, a CPU at 100%) stays visible.

use super::data::{dashed, line, right, with, Axis, Chart, Kind, Line, Unit, Values, RUN_COLORS};
use super::esc;
use crate::lang::{fill, tr, Lang};
use stats::monitor::{MetricKind, Monitoring, Source, SourceState};
use std::io::{self, Write};
use std::ops::Range;

/// `en` in the reader's language: this section's own words (kept here,
/// so that the page's server section reads the same whatever the shared
/// table holds), else the shared table's.
pub(crate) fn say(lang: Lang, en: &'static str) -> &'static str {
    match lang {
        Lang::En => en,
        Lang::Zh => zh(en).unwrap_or_else(|| tr(lang, en)),
    }
}

/// A template of [`say`] filled in order.
fn sayf(lang: Lang, en: &'static str, args: &[&dyn std::fmt::Display]) -> String {
    fill(say(lang, en), args)
}

/// The Chinese of this section's own words.
fn zh(en: &str) -> Option<&'static str> {
    Some(match en {
        "Server" => "服务器",
        "Server charts" => "服务器图表",
        "Diagnosis" => "诊断",
        "problem" => "问题",
        "note" => "提示",
        "fix" => "解决",
        "server CPU, mean / max" => "服务器 CPU，平均 / 最高",
        "load per CPU, highest" => "每个 CPU 的负载，最高",
        "server CPU per response" => "每个响应的服务器 CPU",
        "connections at once, most" => "同时连接数，最多",
        "{}: busy at most / in all" => "{}：最多在忙 / 总数",
        "{}: busy at most" => "{}：最多在忙",
        "php-fpm processes" => "php-fpm 进程",
        "Apache workers" => "Apache 工作者",
        "workers" => "工作者",
        "this machine's busy CPU minus yace's own" => "本机忙碌 CPU 减去 yace 自身",
        "the server machine's busy CPU" => "服务器机器的忙碌 CPU",
        "the CPU time of {}" => "{} 的 CPU 时间",
        "No diagnosis: nothing in the samples points at a limit of the server." => "没有诊断：采样中没有迹象表明服务器到了极限。",
        "The server's figures and their charts are below the load charts." => "服务器的各项数据和图表在负载图表的下方。",
        "What the server did during the run, as sampled by <code>--monitor</code>: each chart is on the run's time axis (the cursor follows the load charts), drawn from its source's own samples; a gap is a failed read." => "运行期间服务器的状况，由 <code>--monitor</code> 采样：每张图都在本次运行的时间轴上（光标与负载图表同步），按各来源自己的采样绘制；空缺表示读取失败。",
        "Monitors" => "监控",
        "source" => "来源",
        "kind" => "类型",
        "what it watched" => "监控对象",
        "samples" => "采样",
        "state" => "状态",
        "ok" => "正常",
        "ok, {} failed reads" => "正常，{} 次读取失败",
        "last failed read: {}" => "最近一次读取失败：{}",
        "DROPPED" => "已放弃",
        "{} · {}" => "{} · {}",
        " Each point covers {} s: the highest sample in it." => " 每个点覆盖 {} 秒：取其中最高的采样。",
        " A line with dots was read at fewer samples than the others: the dots are its readings." => " 带圆点的线比其他指标读取得少：圆点就是它的读数。",
        "Server CPU" => "服务器 CPU",
        "busy" => "忙碌",
        "user" => "用户态",
        "system" => "内核态",
        "iowait" => "等待 I/O",
        "softirq" => "软中断",
        "steal" => "被虚拟化抢占",
        "The share of all the machine's CPUs that was busy (100% = every core), and where it went: user code, the kernel (system), waiting for the disk (iowait), network interrupts (softirq), taken by the hypervisor (steal)." => "整台机器全部 CPU 中忙碌的比例（100% = 所有核心），以及去向：用户代码、内核（内核态）、等待磁盘（等待 I/O）、网络中断（软中断）、被虚拟化宿主占用。",
        "Load per CPU" => "每个 CPU 的负载",
        "1-minute load / CPUs" => "1 分钟负载 / CPU 数",
        "5-minute load / CPUs" => "5 分钟负载 / CPU 数",
        "1-minute load" => "1 分钟负载",
        "The load average divided by the CPUs: above 1, work waited for a CPU. It is an average over a minute, so it lags the load." => "平均负载除以 CPU 数：超过 1 表示有工作在等待 CPU。它是一分钟内的平均值，所以比负载变化滞后。",
        "Memory" => "内存",
        "available" => "可用",
        "total" => "总量",
        "Memory available for new work (the kernel's MemAvailable); the dashed line is the machine's total." => "可供新工作使用的内存（内核的 MemAvailable）；虚线是机器的总内存。",
        "TCP on the target's port" => "目标端口上的 TCP",
        "TCP sockets" => "TCP 套接字",
        "established" => "已建立",
        "listen drops/s" => "监听丢弃/秒",
        "listen overflows/s" => "监听溢出/秒",
        "SYN cookies/s" => "SYN cookie/秒",
        "retransmits/s" => "重传/秒",
        "resets sent/s" => "发出的复位/秒",
        "Sockets on the target's port, the server's side, by state: many in TIME_WAIT means connections are closed and opened again; SYN_RECV, that the server is slow to accept them." => "目标端口上服务器一侧的套接字，按状态区分：TIME_WAIT 很多说明连接被反复关闭再新建；SYN_RECV 说明服务器接受连接太慢。",
        "The machine's TCP sockets, by state." => "整台机器的 TCP 套接字，按状态区分。",
        " Right axis: the kernel's listen-queue drops, retransmits and resets per second (those that happened)." => " 右轴：内核每秒的监听队列丢弃、重传和复位（只画出发生过的）。",
        "Process CPU and memory" => "进程的 CPU 和内存",
        "CPU (% of one core)" => "CPU（单核的 %）",
        "resident memory" => "常驻内存",
        "The watched processes together: CPU in % of one core (200% = two cores busy), and their resident memory (right axis)." => "所监控进程的合计：CPU 以单核的百分比计（200% = 两个核心忙碌），以及它们的常驻内存（右轴）。",
        "The watched processes together: CPU in % of one core (200% = two cores busy), or their resident memory." => "所监控进程的合计：CPU 以单核的百分比计（200% = 两个核心忙碌），或者它们的常驻内存。",
        "Processes and threads" => "进程和线程",
        "processes" => "进程",
        "threads" => "线程",
        "open files" => "打开的文件",
        "How many processes matched, with their threads and open files." => "匹配到的进程数，以及它们的线程和打开的文件数。",
        "nginx connections" => "nginx 连接",
        "active" => "活动",
        "reading" => "读请求",
        "writing" => "写响应",
        "waiting" => "空闲等待",
        "requests/s" => "请求/秒",
        "accepted/s" => "接受/秒",
        "nginx's stub_status: connections open (active), reading a request, writing a response, and idle between requests (waiting); requests and accepted connections per second on the right axis." => "nginx 的 stub_status：打开的连接（活动）、正在读请求、正在写响应、请求之间空闲（空闲等待）；右轴是每秒请求数和接受的连接数。",
        "idle" => "空闲",
        "accesses/s" => "访问/秒",
        "Apache's mod_status: workers busy and idle, and accesses per second (right axis). With no idle worker, new requests wait for one." => "Apache 的 mod_status：忙碌和空闲的工作者，以及每秒访问数（右轴）。没有空闲工作者时，新请求要等待。",
        "Apache scoreboard" => "Apache 记分板",
        "What Apache's worker slots were doing (the scoreboard), by state." => "Apache 各工作者槽位在做什么（记分板），按状态区分。",
        "php-fpm pool" => "php-fpm 进程池",
        "listen queue" => "监听队列",
        "listen queue size" => "监听队列容量",
        "max_children reached" => "达到 max_children",
        "max_children reached, times" => "达到 max_children 的次数",
        "php-fpm's pool: processes active, idle and in all; the listen queue (right axis) holds requests waiting for a free process." => "php-fpm 的进程池：活动、空闲和全部进程；监听队列（右轴）里是等待空闲进程的请求。",
        " Red points: pm.max_children was reached ({} times in the run)." => " 红点：达到了 pm.max_children（运行中 {} 次）。",
        " Red points: pm.max_children was reached (once in the run)." => " 红点：达到了 pm.max_children（运行中 1 次）。",
        "Metrics" => "指标",
        "The endpoint's metrics (the first {} of {} with values); a second unit on the right axis. Every one is in the embedded result and in yace report FILE -F csv." => "该端点的指标（有数值的指标中的前 {} 个，共 {} 个）；第二种单位画在右轴。全部都在内嵌的结果里，也可以用 yace report FILE -F csv 导出。",
        _ => return None,
    })
}

/// The words a diagnosis's severity reads as.
fn severity(lang: Lang, s: &str) -> &'static str {
    if s == "problem" {
        say(lang, "problem")
    } else {
        say(lang, "note")
    }
}

/// A diagnosis of severity `problem` for the verdict: HTML.
pub(crate) fn verdict_issues(m: &Monitoring, lang: Lang) -> Vec<String> {
    m.diagnoses
        .iter()
        .filter(|d| d.severity == "problem")
        .map(|d| {
            let (message, _) = crate::monitor::diagnosis(d, lang);
            format!(
                "<strong>{}</strong>: {}",
                say(lang, "Diagnosis"),
                esc(&message)
            )
        })
        .collect()
}

/// Where `cpu_ms_per_request` came from, in the reader's words.
fn cpu_source(lang: Lang, src: &str) -> String {
    match src {
        "this machine's busy CPU minus yace's own" | "the server machine's busy CPU" => say(
            lang,
            if src.starts_with("this") {
                "this machine's busy CPU minus yace's own"
            } else {
                "the server machine's busy CPU"
            },
        )
        .to_string(),
        s => match s.strip_prefix("the CPU time of ") {
            Some(p) => sayf(lang, "the CPU time of {}", &[&p]),
            None => s.to_string(),
        },
    }
}

fn pool(lang: Lang, src: &str) -> &'static str {
    match src {
        "php-fpm processes" => say(lang, "php-fpm processes"),
        "Apache workers" => say(lang, "Apache workers"),
        _ => say(lang, "workers"),
    }
}

/// The server's headline figures, its diagnoses with their fixes, and any
/// source that was dropped: under the run's headline figures. `level` is
/// the heading's (2 on a run's page, 3 inside a run of a comparison).
pub(crate) fn head(w: &mut impl Write, m: &Monitoring, lang: Lang, level: u8) -> io::Result<()> {
    writeln!(
        w,
        "<section class=\"server-head\">\n<h{level}>{}</h{level}>",
        say(lang, "Server")
    )?;
    let f = &m.server;
    let mut cards: Vec<(String, String, Option<String>)> = Vec::new();
    if let Some(mean) = f.cpu_mean_pct {
        let v = match f.cpu_max_pct {
            Some(max) => format!("{mean:.0}% / {max:.0}%"),
            None => format!("{mean:.0}%"),
        };
        cards.push((v, say(lang, "server CPU, mean / max").into(), None));
    }
    if let Some(l) = f.load_per_cpu_max {
        cards.push((
            format!("{l:.2}"),
            say(lang, "load per CPU, highest").into(),
            None,
        ));
    }
    if let Some(ms) = f.cpu_ms_per_request {
        cards.push((
            format!("{ms:.3} ms"),
            say(lang, "server CPU per response").into(),
            f.cpu_source.as_deref().map(|s| cpu_source(lang, s)),
        ));
    }
    if let Some(c) = f.connections_max {
        cards.push((
            format!("{c:.0}"),
            say(lang, "connections at once, most").into(),
            None,
        ));
    }
    if let Some(b) = f.workers_busy_max {
        let name = pool(lang, f.workers_source.as_deref().unwrap_or(""));
        cards.push(match f.workers_total {
            Some(t) => (
                format!("{b:.0} / {t:.0}"),
                sayf(lang, "{}: busy at most / in all", &[&name]),
                None,
            ),
            None => (
                format!("{b:.0}"),
                sayf(lang, "{}: busy at most", &[&name]),
                None,
            ),
        });
    }
    if !cards.is_empty() {
        writeln!(w, "<div class=\"headline server\">")?;
        for (v, k, small) in cards {
            writeln!(
                w,
                "<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{}{}</div></div>",
                esc(&v),
                esc(&k),
                small
                    .map(|s| format!("<br><small>{}</small>", esc(&s)))
                    .unwrap_or_default()
            )?;
        }
        writeln!(w, "</div>")?;
    }
    if m.diagnoses.is_empty() {
        writeln!(
            w,
            "<p class=\"hint\">{}</p>",
            say(
                lang,
                "No diagnosis: nothing in the samples points at a limit of the server."
            )
        )?;
    } else {
        writeln!(w, "<ul class=\"diagnoses\">")?;
        for d in &m.diagnoses {
            let (message, fix) = crate::monitor::diagnosis(d, lang);
            let class = if d.severity == "problem" {
                "problem"
            } else {
                "note"
            };
            writeln!(
                w,
                "<li class=\"{class}\" data-code=\"{}\"><span class=\"sev\">{}</span> {}<br><span class=\"fix\"><strong>{}:</strong> {}</span></li>",
                esc(&d.code),
                severity(lang, &d.severity),
                esc(&message),
                say(lang, "fix"),
                esc(&fix)
            )?;
        }
        writeln!(w, "</ul>")?;
    }
    for line in crate::monitor::asides(m, lang) {
        writeln!(w, "<p class=\"hint\">{}</p>", esc(&line))?;
    }
    for n in &m.notes {
        writeln!(w, "<p class=\"hint\">{}</p>", esc(n))?;
    }
    let lines = crate::monitor::sources(m, lang);
    for (s, l) in m.sources.iter().zip(&lines) {
        if s.state == SourceState::Dropped {
            writeln!(w, "<p class=\"dropped\">{}</p>", esc(l))?;
        }
    }
    // On a run's page the charts are further down (in a comparison, each
    // run's follow at once).
    if level == 2 {
        writeln!(
            w,
            "<p class=\"hint\">{}</p>",
            say(
                lang,
                "The server's figures and their charts are below the load charts."
            )
        )?;
    }
    writeln!(w, "</section>")
}

/// The section under the load charts: the sources, then their charts
/// (made by [`charts`]).
pub(crate) fn section(
    w: &mut impl Write,
    m: &Monitoring,
    charts: &[(Chart, Chart)],
    lang: Lang,
    level: u8,
) -> io::Result<()> {
    writeln!(
        w,
        "<section class=\"server\">\n<h{level}>{}</h{level}>\n<p class=\"hint\">{}</p>",
        say(lang, "Server charts"),
        say(lang, "What the server did during the run, as sampled by <code>--monitor</code>: each chart is on the run's time axis (the cursor follows the load charts), drawn from its source's own samples; a gap is a failed read.")
    )?;
    writeln!(
        w,
        "<table class=\"sources\"><thead><tr><th>#</th><th class=\"text\">{}</th><th class=\"text\">{}</th><th class=\"text\">{}</th><th>{}</th><th class=\"text\">{}</th></tr></thead><tbody>",
        say(lang, "source"),
        say(lang, "kind"),
        say(lang, "what it watched"),
        say(lang, "samples"),
        say(lang, "state")
    )?;
    for (i, s) in m.sources.iter().enumerate() {
        // The state; why it was dropped, or the last failed read, in a
        // row of its own below (the error can be long).
        let (row, class, state, why) = match s.state {
            SourceState::Dropped => (
                "source dropped",
                "fail",
                say(lang, "DROPPED").to_string(),
                s.error.clone(),
            ),
            SourceState::Ok if s.failures > 0 => (
                "source",
                "warn",
                sayf(lang, "ok, {} failed reads", &[&s.failures]),
                s.error
                    .as_ref()
                    .map(|e| sayf(lang, "last failed read: {}", &[e])),
            ),
            SourceState::Ok => ("source", "pass", say(lang, "ok").to_string(), None),
        };
        // Blind to the end: the charts' gap from there is the source's, not
        // the server's.
        let why = match s.blind() {
            Some((from, reason)) => {
                let from = format!("{from:.1}");
                let blind = sayf(lang, "blind from {} s to the end ({})", &[&from, &reason]);
                Some(match why {
                    Some(w) => format!("{w}; {blind}"),
                    None => blind,
                })
            }
            None => why,
        };
        writeln!(
            w,
            "<tr class=\"{row}\"><td>{}</td><td class=\"text\"><code>{}</code></td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td class=\"text {class}\">{}</td></tr>",
            i + 1,
            esc(&s.spec),
            esc(&s.kind),
            esc(&s.label),
            s.t.len(),
            esc(&state)
        )?;
        if let Some(why) = why {
            writeln!(
                w,
                "<tr class=\"why{}\"><td></td><td class=\"text {class}\" colspan=\"5\">{}</td></tr>",
                if s.state == SourceState::Dropped {
                    " dropped"
                } else {
                    ""
                },
                esc(&why)
            )?;
        }
    }
    writeln!(w, "</tbody></table>")?;
    for (c, tc) in charts {
        super::chart_figure(w, c, tc, lang)?;
    }
    writeln!(w, "</section>")
}

/// Every source's charts, each as drawn (at most `data::MAX_POINTS`
/// points) and as its table shows it (at most `data::TABLE_ROWS` rows);
/// `prefix` keeps the ids of several runs' charts apart.
pub(crate) fn charts(m: &Monitoring, prefix: &str, lang: Lang) -> Vec<(Chart, Chart)> {
    let draw = all(m, prefix, super::data::MAX_POINTS, false, lang);
    let table = all(m, prefix, super::data::TABLE_ROWS, true, lang);
    draw.into_iter().zip(table).collect()
}

fn all(m: &Monitoring, prefix: &str, most: usize, table: bool, lang: Lang) -> Vec<Chart> {
    let mut out = Vec::new();
    for (i, s) in m.sources.iter().enumerate() {
        let src = Samples {
            table,
            ..Samples::new(s, most)
        };
        let id = |what: &str| format!("{prefix}server-{}-{what}", i + 1);
        let mut c = match s.kind.as_str() {
            "system" | "node" | "ssh" => machine(&src, &id, lang),
            "process" => process(&src, &id, lang),
            "nginx" => nginx(&src, &id, lang),
            "apache" => apache(&src, &id, lang),
            "fpm" => fpm(&src, &id, lang),
            _ => Vec::new(),
        };
        if c.is_empty() {
            c.extend(generic(&src, &id, lang));
        }
        for chart in &mut c {
            chart.title = sayf(lang, "{} · {}", &[&chart.title, &s.spec]);
            if chart.lines.iter().any(|l| l.sparse) {
                chart.note.push_str(say(
                    lang,
                    " A line with dots was read at fewer samples than the others: the dots are its readings.",
                ));
            }
            if src.width > 0.0 {
                chart.note.push_str(&sayf(
                    lang,
                    " Each point covers {} s: the highest sample in it.",
                    &[&src.width],
                ));
            }
        }
        out.extend(c);
    }
    out
}

/// A source's samples as a chart draws them: as they are, or in buckets.
struct Samples<'a> {
    s: &'a Source,
    x: Vec<f64>,
    groups: Vec<Range<usize>>,
    /// Seconds per bucket; 0 when not bucketed.
    width: f64,
    /// For a chart's table (what a mark means, in figures).
    table: bool,
}

impl<'a> Samples<'a> {
    fn new(s: &'a Source, most: usize) -> Self {
        let n = s.t.len();
        let last = s.t.last().copied().unwrap_or(0.0).max(0.0);
        if n <= most.max(2) {
            return Samples {
                s,
                x: s.t.clone(),
                groups: (0..n).map(|i| i..i + 1).collect(),
                width: 0.0,
                table: false,
            };
        }
        let width = (last / (most - 1) as f64).ceil().max(1.0);
        let mut x = Vec::new();
        let mut groups: Vec<Range<usize>> = Vec::new();
        let mut key = f64::NAN;
        for (i, &t) in s.t.iter().enumerate() {
            let b = (t.max(0.0) / width).floor();
            if b == key {
                if let Some(g) = groups.last_mut() {
                    g.end = i + 1;
                }
            } else {
                key = b;
                x.push(b * width);
                groups.push(i..i + 1);
            }
        }
        Samples {
            s,
            x,
            groups,
            width,
            table: false,
        }
    }

    /// The metric's values, or None when the source has no such metric.
    fn values(&self, name: &str) -> Option<Values> {
        let m = Monitoring::metric(self.s, name)?;
        Some(
            self.groups
                .iter()
                .map(|g| {
                    m.values
                        .get(g.clone())
                        .unwrap_or_default()
                        .iter()
                        .flatten()
                        .copied()
                        .reduce(f64::max)
                })
                .collect(),
        )
    }

    /// A line of the metric, if the source has it.
    fn line(&self, name: &str, label: &str, unit: Unit, color: &'static str) -> Option<Line> {
        self.values(name).map(|v| Line {
            sparse: self.sparse(name),
            ..with(line(label.to_string(), unit, color), v)
        })
    }

    /// Whether the metric was left out of samples its source did read
    /// (a failed read is a gap in every metric; this is not one). A rate
    /// has none at the first sample and after a failed one: not left out.
    fn sparse(&self, name: &str) -> bool {
        let Some(m) = Monitoring::metric(self.s, name) else {
            return false;
        };
        // The samples that were read: any gauge has a value.
        let read = |i: usize| {
            self.s.metrics.iter().any(|o| {
                o.kind == MetricKind::Gauge && o.values.get(i).is_some_and(Option::is_some)
            })
        };
        m.values.iter().enumerate().any(|(i, v)| {
            v.is_none() && read(i) && (m.kind == MetricKind::Gauge || (i > 0 && read(i - 1)))
        })
    }

    /// A line of the metric if any of its values is above zero.
    fn line_if_any(
        &self,
        name: &str,
        label: &str,
        unit: Unit,
        color: &'static str,
    ) -> Option<Line> {
        self.line(name, label, unit, color)
            .filter(|l| l.values.iter().flatten().any(|&v| v > 0.0))
    }

    /// A time chart of `lines`, or None when none has a value.
    fn chart(&self, id: String, title: &str, note: String, lines: Vec<Line>) -> Option<Chart> {
        if !lines.iter().any(|l| l.values.iter().any(Option::is_some)) {
            return None;
        }
        // Nothing on the left axis: the right one's lines move there.
        let lines = if lines.iter().all(|l| l.axis == 1) {
            lines.into_iter().map(|l| Line { axis: 0, ..l }).collect()
        } else {
            lines
        };
        Some(Chart {
            id,
            title: title.to_string(),
            kind: Kind::Time,
            note,
            x: self.x.clone(),
            lines,
            log: false,
            axis: Axis::default(),
        })
    }
}

const BUSY: &str = "#1d2125";
const BLUE: &str = "#1f6fb4";
const ORANGE: &str = "#d9480f";
const GREEN: &str = "#2b8a3e";
const PURPLE: &str = "#862e9c";
const AMBER: &str = "#e67700";
const TEAL: &str = "#0b7285";
const RED: &str = "#c92a2a";
const GREY: &str = "#868e96";

/// This machine (`system`), node_exporter (`node`) or another machine
/// over SSH: CPU, load per CPU, memory, TCP.
fn machine(src: &Samples, id: &dyn Fn(&str) -> String, lang: Lang) -> Vec<Chart> {
    let t = |en: &'static str| say(lang, en);
    let mut out = Vec::new();
    let mut cpu: Vec<Line> = Vec::new();
    cpu.extend(src.line("cpu_busy", t("busy"), Unit::Cpu, BUSY));
    for (name, label, color) in [
        ("cpu_user", "user", BLUE),
        ("cpu_system", "system", ORANGE),
        ("cpu_iowait", "iowait", PURPLE),
        ("cpu_softirq", "softirq", AMBER),
    ] {
        cpu.extend(src.line(name, t(label), Unit::Cpu, color).map(dashed));
    }
    cpu.extend(
        src.line_if_any("cpu_steal", t("steal"), Unit::Cpu, TEAL)
            .map(dashed),
    );
    out.extend(src.chart(
        id("cpu"),
        t("Server CPU"),
        t("The share of all the machine's CPUs that was busy (100% = every core), and where it went: user code, the kernel (system), waiting for the disk (iowait), network interrupts (softirq), taken by the hypervisor (steal).").into(),
        cpu,
    ));

    // Load per CPU (each sample's own CPU count).
    let per_cpu = |name: &str| -> Option<Values> {
        let load = src.values(name)?;
        let cpus = src.values("cpus")?;
        Some(
            load.iter()
                .zip(&cpus)
                .map(|(l, c)| match (l, c) {
                    (Some(l), Some(c)) if *c > 0.0 => Some(l / c),
                    _ => None,
                })
                .collect(),
        )
    };
    let mut load = Vec::new();
    if let Some(v) = per_cpu("load1") {
        load.push(with(line(t("1-minute load / CPUs"), Unit::Ratio, BLUE), v));
        load.extend(
            per_cpu("load5")
                .map(|v| dashed(with(line(t("5-minute load / CPUs"), Unit::Ratio, GREY), v))),
        );
    } else {
        load.extend(src.line("load1", t("1-minute load"), Unit::Ratio, BLUE));
    }
    out.extend(src.chart(
        id("load"),
        t("Load per CPU"),
        t("The load average divided by the CPUs: above 1, work waited for a CPU. It is an average over a minute, so it lags the load.").into(),
        load,
    ));

    let mut mem = Vec::new();
    mem.extend(src.line("mem_available_bytes", t("available"), Unit::Bytes, GREEN));
    mem.extend(
        src.line("mem_total_bytes", t("total"), Unit::Bytes, GREY)
            .map(dashed),
    );
    out.extend(src.chart(
        id("memory"),
        t("Memory"),
        t("Memory available for new work (the kernel's MemAvailable); the dashed line is the machine's total.").into(),
        mem,
    ));

    let port = src.values("tcp_port_established").is_some();
    let mut tcp = Vec::new();
    let note = if port {
        for (name, label, color) in [
            ("tcp_port_established", t("established"), BLUE),
            ("tcp_port_time_wait", "TIME_WAIT", AMBER),
            ("tcp_port_syn_recv", "SYN_RECV", RED),
            ("tcp_port_close_wait", "CLOSE_WAIT", PURPLE),
            ("tcp_port_fin_wait", "FIN_WAIT", TEAL),
        ] {
            tcp.extend(src.line(name, label, Unit::Count, color));
        }
        t("Sockets on the target's port, the server's side, by state: many in TIME_WAIT means connections are closed and opened again; SYN_RECV, that the server is slow to accept them.")
    } else {
        tcp.extend(src.line("tcp_established", t("established"), Unit::Count, BLUE));
        tcp.extend(src.line("tcp_time_wait_all", "TIME_WAIT", Unit::Count, AMBER));
        t("The machine's TCP sockets, by state.")
    };
    let mut note = note.to_string();
    let mut kernel = false;
    for (name, label, color) in [
        ("listen_drops", "listen drops/s", RED),
        ("listen_overflows", "listen overflows/s", ORANGE),
        ("syncookies_sent", "SYN cookies/s", PURPLE),
        ("retrans_segs", "retransmits/s", GREY),
        ("out_rsts", "resets sent/s", "#495057"),
    ] {
        if let Some(l) = src.line_if_any(name, t(label), Unit::PerSecond, color) {
            tcp.push(right(dashed(l)));
            kernel = true;
        }
    }
    if kernel {
        note.push_str(t(" Right axis: the kernel's listen-queue drops, retransmits and resets per second (those that happened)."));
    }
    let title = if port {
        t("TCP on the target's port")
    } else {
        t("TCP sockets")
    };
    out.extend(src.chart(id("tcp"), title, note, tcp));
    out
}

/// `pid:`, `pidfile:`, `proc:`: CPU and memory, processes and threads.
fn process(src: &Samples, id: &dyn Fn(&str) -> String, lang: Lang) -> Vec<Chart> {
    let t = |en: &'static str| say(lang, en);
    let mut out = Vec::new();
    let mut a = Vec::new();
    a.extend(src.line("cpu", t("CPU (% of one core)"), Unit::Cpu, ORANGE));
    a.extend(
        src.line("rss_bytes", t("resident memory"), Unit::Bytes, BLUE)
            .map(right),
    );
    let note = if a.len() == 2 {
        t("The watched processes together: CPU in % of one core (200% = two cores busy), and their resident memory (right axis).")
    } else {
        t("The watched processes together: CPU in % of one core (200% = two cores busy), or their resident memory.")
    };
    out.extend(src.chart(id("cpu"), t("Process CPU and memory"), note.into(), a));
    let mut b = Vec::new();
    b.extend(src.line("processes", t("processes"), Unit::Count, BUSY));
    b.extend(
        src.line("threads", t("threads"), Unit::Count, GREEN)
            .map(dashed),
    );
    b.extend(
        src.line("open_files", t("open files"), Unit::Count, PURPLE)
            .map(dashed),
    );
    out.extend(src.chart(
        id("processes"),
        t("Processes and threads"),
        t("How many processes matched, with their threads and open files.").into(),
        b,
    ));
    out
}

fn nginx(src: &Samples, id: &dyn Fn(&str) -> String, lang: Lang) -> Vec<Chart> {
    let t = |en: &'static str| say(lang, en);
    let mut l = Vec::new();
    for (name, color) in [
        ("active", BUSY),
        ("reading", BLUE),
        ("writing", ORANGE),
        ("waiting", GREEN),
    ] {
        l.extend(src.line(name, t(name), Unit::Count, color));
    }
    l.extend(
        src.line("requests", t("requests/s"), Unit::PerSecond, PURPLE)
            .map(right),
    );
    l.extend(
        src.line("accepts", t("accepted/s"), Unit::PerSecond, GREY)
            .map(|l| right(dashed(l))),
    );
    src.chart(
        id("nginx"),
        t("nginx connections"),
        t("nginx's stub_status: connections open (active), reading a request, writing a response, and idle between requests (waiting); requests and accepted connections per second on the right axis.").into(),
        l,
    )
    .into_iter()
    .collect()
}

fn apache(src: &Samples, id: &dyn Fn(&str) -> String, lang: Lang) -> Vec<Chart> {
    let t = |en: &'static str| say(lang, en);
    let mut out = Vec::new();
    let mut l = Vec::new();
    l.extend(src.line("busy_workers", t("busy"), Unit::Count, ORANGE));
    l.extend(src.line("idle_workers", t("idle"), Unit::Count, GREEN));
    l.extend(
        src.line("total_accesses", t("accesses/s"), Unit::PerSecond, PURPLE)
            .map(right),
    );
    out.extend(src.chart(
        id("workers"),
        t("Apache workers"),
        t("Apache's mod_status: workers busy and idle, and accesses per second (right axis). With no idle worker, new requests wait for one.").into(),
        l,
    ));
    let board: Vec<Line> = src
        .s
        .metrics
        .iter()
        .filter(|m| m.name.starts_with("sb_") && m.name != "sb_slots" && m.name != "sb_open")
        .filter_map(|m| {
            src.line_if_any(
                &m.name,
                &m.name,
                Unit::Count,
                RUN_COLORS[0], // coloured below
            )
        })
        .take(8)
        .enumerate()
        .map(|(i, l)| Line {
            color: RUN_COLORS[i % RUN_COLORS.len()],
            ..l
        })
        .collect();
    out.extend(src.chart(
        id("scoreboard"),
        t("Apache scoreboard"),
        t("What Apache's worker slots were doing (the scoreboard), by state.").into(),
        board,
    ));
    out
}

fn fpm(src: &Samples, id: &dyn Fn(&str) -> String, lang: Lang) -> Vec<Chart> {
    let t = |en: &'static str| say(lang, en);
    let mut l = Vec::new();
    l.extend(src.line("active_processes", t("active"), Unit::Count, ORANGE));
    l.extend(src.line("idle_processes", t("idle"), Unit::Count, GREEN));
    l.extend(
        src.line("total_processes", t("total"), Unit::Count, BUSY)
            .map(dashed),
    );
    l.extend(
        src.line("listen_queue", t("listen queue"), Unit::Count, PURPLE)
            .map(right),
    );
    l.extend(
        src.line_if_any(
            "listen_queue_len",
            t("listen queue size"),
            Unit::Count,
            GREY,
        )
        .map(|l| right(dashed(l))),
    );
    let mut note =
        t("php-fpm's pool: processes active, idle and in all; the listen queue (right axis) holds requests waiting for a free process.").to_string();
    let reached = Monitoring::metric(src.s, "max_children_reached");
    if let (Some(m), Some(rate)) = (reached, src.values("max_children_reached")) {
        if rate.iter().flatten().any(|&v| v > 0.0) {
            // Marked on the total (or the active) processes' line.
            let at = src
                .values("total_processes")
                .or_else(|| src.values("active_processes"))
                .unwrap_or_else(|| vec![Some(0.0); rate.len()]);
            let marks = if src.table {
                // In the table: how many times, in each row's time.
                src.groups
                    .iter()
                    .map(|g| {
                        let n: f64 = g
                            .clone()
                            .filter(|&i| i > 0)
                            .filter_map(|i| {
                                let r = (*m.values.get(i)?)?;
                                Some(r * (src.s.t[i] - src.s.t[i - 1]))
                            })
                            .sum();
                        (n >= 0.5).then(|| n.round())
                    })
                    .collect()
            } else {
                rate.iter()
                    .zip(at)
                    .map(|(r, v)| r.filter(|&r| r > 0.0).and(v))
                    .collect()
            };
            let label = if src.table {
                t("max_children reached, times")
            } else {
                t("max_children reached")
            };
            l.push(Line {
                points: true,
                ..with(line(label, Unit::Count, RED), marks)
            });
            let times = m.increase.unwrap_or_else(|| {
                // Without the run's increase: the rate over each interval.
                src.s
                    .t
                    .windows(2)
                    .zip(m.values.iter().skip(1))
                    .filter_map(|(w, v)| v.map(|v| v * (w[1] - w[0])))
                    .sum()
            });
            if times.round() == 1.0 {
                note.push_str(t(
                    " Red points: pm.max_children was reached (once in the run).",
                ));
            } else {
                note.push_str(&sayf(
                    lang,
                    " Red points: pm.max_children was reached ({} times in the run).",
                    &[&format!("{times:.0}")],
                ));
            }
        }
    }
    src.chart(id("pool"), t("php-fpm pool"), note, l)
        .into_iter()
        .collect()
}

/// `prom:` (and any kind this page does not know): the first metrics with
/// values, up to eight, in one chart; a second unit on the right axis.
fn generic(src: &Samples, id: &dyn Fn(&str) -> String, lang: Lang) -> Option<Chart> {
    const MOST: usize = 8;
    let with_values: Vec<_> = src
        .s
        .metrics
        .iter()
        .filter(|m| m.values.iter().any(Option::is_some))
        .collect();
    let first_unit = with_values.first().map(|m| m.unit.clone());
    let lines: Vec<Line> = with_values
        .iter()
        .take(MOST)
        .enumerate()
        .filter_map(|(i, m)| {
            let l = src.line(
                &m.name,
                &m.name,
                unit_of(&m.unit),
                RUN_COLORS[i % RUN_COLORS.len()],
            )?;
            Some(if Some(&m.unit) == first_unit.as_ref() {
                l
            } else {
                right(dashed(l))
            })
        })
        .collect();
    src.chart(
        id("metrics"),
        say(lang, "Metrics"),
        sayf(
            lang,
            "The endpoint's metrics (the first {} of {} with values); a second unit on the right axis. Every one is in the embedded result and in yace report FILE -F csv.",
            &[&lines.len(), &with_values.len()],
        ),
        lines,
    )
}

/// How a metric's unit reads.
fn unit_of(unit: &str) -> Unit {
    match unit {
        "%" | "% of one CPU" => Unit::Cpu,
        "bytes" => Unit::Bytes,
        u if u.ends_with("/s") => Unit::PerSecond,
        _ => Unit::Count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A php-fpm source as a result holds it (fields it lacks take their
    /// defaults).
    fn source(t: Vec<f64>, metrics: Vec<(&str, Vec<Option<f64>>)>) -> Source {
        let metrics: Vec<_> = metrics
            .iter()
            .map(|(name, values)| {
                serde_json::json!({"name": name, "unit": "count", "kind": "gauge", "values": values})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "spec": "fpm:http://127.0.0.1/status", "kind": "fpm", "label": "php-fpm pool www",
            "state": "ok", "error": null, "failures": 0, "t": t, "metrics": metrics,
        }))
        .expect("a source")
    }

    #[test]
    fn long_sources_are_bucketed_keeping_their_peaks() {
        let n = 10_000;
        let t: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let mut v: Vec<Option<f64>> = (0..n).map(|_| Some(1.0)).collect();
        v[4321] = Some(99.0);
        v[10] = None;
        let s = source(t, vec![("listen_queue", v)]);
        let src = Samples::new(&s, 1500);
        assert!(src.x.len() <= 1500, "{}", src.x.len());
        assert_eq!(src.width, 4.0);
        let got = src.values("listen_queue").unwrap();
        assert!(got.contains(&Some(99.0)));
        assert!(
            got.iter().all(Option::is_some),
            "a bucket with one gap keeps its other samples"
        );
        // Short sources are drawn as sampled, gaps and all.
        let s = source(
            vec![0.0, 0.5, 1.0],
            vec![("x", vec![None, Some(2.0), None])],
        );
        let src = Samples::new(&s, 1500);
        assert_eq!(src.x, vec![0.0, 0.5, 1.0]);
        assert_eq!(src.values("x").unwrap(), vec![None, Some(2.0), None]);
        assert!(src.values("y").is_none());
    }

    #[test]
    fn a_figure_read_at_fewer_samples_is_joined_a_failed_read_is_not() {
        let mut s = source(
            vec![0.0, 1.0, 2.0, 3.0, 4.0],
            vec![
                (
                    "tcp_established",
                    vec![Some(1.0), Some(2.0), None, Some(2.0), Some(2.0)],
                ),
                (
                    "tcp_port_established",
                    vec![Some(1.0), None, None, Some(2.0), None],
                ),
                ("cpu_busy", vec![None, Some(50.0), None, None, Some(60.0)]),
                ("listen_drops", vec![None, Some(0.0), None, Some(1.0), None]),
            ],
        );
        s.metrics[2].kind = MetricKind::Rate;
        s.metrics[3].kind = MetricKind::Rate;
        let src = Samples::new(&s, 1500);
        assert!(!src.sparse("tcp_established"), "2.0 s failed: a gap");
        assert!(src.sparse("tcp_port_established"), "not read at 1.0 s");
        assert!(
            !src.sparse("cpu_busy"),
            "a rate: none at the start and after a gap"
        );
        assert!(src.sparse("listen_drops"), "a rate left out at 4.0 s");
    }

    #[test]
    fn max_children_reached_is_marked_on_the_pool() {
        let mut s = source(
            vec![0.0, 1.0, 2.0, 3.0],
            vec![
                (
                    "active_processes",
                    vec![Some(1.0), Some(5.0), Some(5.0), Some(2.0)],
                ),
                ("total_processes", vec![Some(5.0); 4]),
                (
                    "listen_queue",
                    vec![Some(0.0), Some(3.0), Some(7.0), Some(0.0)],
                ),
                (
                    "max_children_reached",
                    vec![None, Some(0.0), Some(2.0), Some(0.0)],
                ),
            ],
        );
        s.metrics[3].kind = MetricKind::Rate;
        s.metrics[3].increase = Some(2.0);
        let src = Samples::new(&s, 1500);
        let c = fpm(&src, &|w| w.to_string(), Lang::En);
        assert_eq!(c.len(), 1);
        let marks = c[0].lines.iter().find(|l| l.points).expect("marked");
        assert_eq!(marks.values, vec![None, None, Some(5.0), None]);
        // Its table says how many times.
        let src = Samples { table: true, ..src };
        let c = fpm(&src, &|w| w.to_string(), Lang::En);
        let marks = c[0].lines.iter().find(|l| l.points).expect("marked");
        assert_eq!(marks.values, vec![None, None, Some(2.0), None]);
        assert!(c[0].note.contains("(2 times in the run)"), "{}", c[0].note);
    }
}
