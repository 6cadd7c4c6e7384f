//! The reader's language: English (the default) or Chinese, for the terminal
//! summary, Markdown and HTML (`yace ab` keeps ab's English layout, and the
//! JSON, CSV and JUnit outputs are for machines).
//!
//! English is the key: a renderer writes `tr(lang, "Requests")`, and the
//! table below gives the Chinese. Phrases with figures are templates whose
//! `{}` are filled in order ([`fill`]). Free text that a result carries
//! (its warnings, written when it was made) is translated where its shape
//! is known ([`warning`]) and otherwise shown as it is. The renderers read
//! no environment: the binary chooses ([`Lang::from_env`] with its getter).

/// The language a report is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl Lang {
    /// `en`, `zh`, or a locale such as `zh_CN.UTF-8`, `zh-TW`, `en_US`.
    pub fn parse(s: &str) -> Option<Lang> {
        let s = s.trim().to_ascii_lowercase();
        if s == "zh" || s.starts_with("zh_") || s.starts_with("zh-") || s.starts_with("zh.") {
            Some(Lang::Zh)
        } else if s == "en"
            || s.starts_with("en_")
            || s.starts_with("en-")
            || s == "c"
            || s == "posix"
            || s.starts_with("c.")
        {
            Some(Lang::En)
        } else {
            None
        }
    }

    /// `YACE_LANG` if set, else the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`:
    /// the first that is set), else English.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Lang {
        for key in ["YACE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"] {
            if let Some(v) = get(key).filter(|v| !v.is_empty()) {
                return Lang::parse(&v).unwrap_or(Lang::En);
            }
        }
        Lang::En
    }

    /// The `lang` attribute of an HTML page.
    pub fn html(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }
}

/// `en` in the reader's language.
pub fn tr(lang: Lang, en: &'static str) -> &'static str {
    match lang {
        Lang::En => en,
        Lang::Zh => zh(en).unwrap_or(en),
    }
}

/// A template's `{}` filled in order.
pub fn fill(template: &str, args: &[&dyn std::fmt::Display]) -> String {
    let mut out = String::with_capacity(template.len() + 16 * args.len());
    let mut args = args.iter();
    let mut rest = template;
    while let Some(at) = rest.find("{}") {
        out.push_str(&rest[..at]);
        if let Some(a) = args.next() {
            out.push_str(&a.to_string());
        }
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// `tr` then `fill`.
pub fn trf(lang: Lang, en: &'static str, args: &[&dyn std::fmt::Display]) -> String {
    fill(tr(lang, en), args)
}

/// A warning a result carries, in the reader's language: the known ones
/// rebuilt from the figures in their text, any other as it is.
pub fn warning(lang: Lang, w: &str) -> String {
    if lang == Lang::En {
        return w.to_string();
    }
    let num = |s: &str| -> String {
        s.chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
            .collect::<String>()
            .trim_end_matches(['.', ','])
            .to_string()
    };
    if w.starts_with("client and server share this machine's CPUs") {
        "客户端与服务器共用本机 CPU：请用 taskset 把两者绑到不同的 CPU 上，结果才有意义".into()
    } else if w.starts_with("the load generator was saturated") {
        format!(
            "压测客户端已饱和：最忙的线程有 {}% 的时间在占用 CPU，速率可能受限于客户端；请增加线程（-t）或客户端机器",
            num(w)
        )
    } else if w.starts_with("certificate verification was OFF") {
        "证书校验已关闭（--insecure）：没有验证服务器的身份".into()
    } else if let Some(rest) = w.strip_prefix("the server is out of spec: ") {
        format!(
            "服务器不符合规范：{} 个响应需要宽松解析才能读取（见 lenient），yace 因此关闭了这些连接而没有复用",
            num(rest)
        )
    } else if w.contains("requests failed for lack of client resources") {
        format!(
            "{} 个请求因客户端资源不足（文件描述符或本地端口）而失败：本次运行不能作为服务器的测量结果；请运行 `yace doctor`",
            num(w)
        )
    } else if w.contains("cookies were not kept") {
        format!(
            "{} 个 Cookie 没有保存：每个用户的 Cookie 罐像浏览器对一个站点那样有上限（最旧的先丢弃），之后的请求不带它们",
            num(w)
        )
    } else {
        w.to_string()
    }
}

/// A shortfall's paragraph in the reader's language (English: the one the
/// result carries; Chinese: rebuilt from its figures and cause).
pub fn shortfall(lang: Lang, sf: &stats::Shortfall) -> String {
    use stats::shortfall::Cause;
    if lang == Lang::En {
        return sf.message.clone();
    }
    let c = crate::fmt::count;
    let mut what = if sf.iterations {
        format!(
            "所要求的负载没有提供出来：到期的 {} 次迭代中开始了 {} 次（{:.1}%），错过 {} 次",
            c(sf.due),
            c(sf.sent),
            sf.sent as f64 * 100.0 / sf.due.max(1) as f64,
            c(sf.dropped)
        )
    } else {
        format!(
            "所要求的负载没有提供出来：到期的 {} 个请求中发送了 {} 个（{:.1}%）",
            c(sf.due),
            c(sf.sent),
            sf.sent as f64 * 100.0 / sf.due.max(1) as f64
        )
    };
    if sf.dropped > 0 && !sf.iterations {
        what.push_str(&format!("，丢弃 {} 个", c(sf.dropped)));
    }
    if sf.late > 0 {
        what.push_str(&format!("，{} 个晚发超过 10 毫秒", c(sf.late)));
    }
    let (why, fix) = match sf.cause {
        Cause::ClientSaturated => (
            "客户端已饱和，无法按时发送",
            "增加线程（-t）或客户端机器；这个速率下测到的不是服务器",
        ),
        Cause::InflightCap => (
            "在途请求上限不够：按测得的服务时间，计划速率需要的在途请求数超过了 --max-inflight",
            "提高 --max-inflight；如果服务时间随之变长，说明服务器撑不住这个速率，这本身就是结论",
        ),
        Cause::Connections => (
            "连接失败或被服务器关闭，槽位忙于建立连接",
            "检查服务器的连接限制（listen backlog、worker_connections、MaxRequestWorkers、keepalive_requests）和下面的错误",
        ),
        Cause::ServerTooSlow => (
            "服务器有时太慢：请求到期时所有槽位都在忙",
            "看每秒数据找出发生的时间；降低速率找出服务器能持续承受的水平，或者接受这次停顿就是服务器的表现",
        ),
        Cause::UsersNeverServed => (
            "服务器同时只接受了有限的连接：一部分用户从第一个请求到运行结束都没有得到响应（保持连接时每个用户占住服务器的一个工作进程）",
            "提高服务器的连接或工作进程上限（Apache MaxRequestWorkers、nginx worker_connections、php-fpm pm.max_children），或者减少用户数；上面的延迟已经计入了等待用户的时间",
        ),
        Cause::SlowIterations => (
            "迭代超过了节奏间隔：下一次迭代到期时用户还在等上一次的响应",
            "服务器在这个节奏下撑不住这么多用户；减少用户数或拉长 --pacing，找出它能持续承受的水平",
        ),
    };
    format!("{what}。原因：{why}。对策：{fix}。")
}

/// The "fell behind" verdict in the reader's language (English: the one
/// the result carries; Chinese: rebuilt from its figures).
pub fn behind(lang: Lang, b: &stats::Behind) -> String {
    if lang == Lang::En {
        return b.message.clone();
    }
    let ms = |us: f64| {
        if us >= 1e6 {
            format!("{:.2} 秒", us / 1e6)
        } else {
            format!("{:.1} 毫秒", us / 1e3)
        }
    };
    let mut out = format!(
        "服务器跟不上：从第 {} 秒起，每秒只应答了 {:.1} 个，而提供的是 {:.1} 个，请求越积越多",
        b.since_s + 1,
        b.answered_per_s,
        b.offered_per_s
    );
    if b.waiting_at_end > 0 || b.dropped > 0 {
        out.push_str(&format!(
            "（结束时仍有 {} 个在等待",
            crate::fmt::count(b.waiting_at_end)
        ));
        if b.dropped > 0 {
            out.push_str(&format!("，丢弃 {} 个", crate::fmt::count(b.dropped)));
        }
        out.push('）');
    }
    if b.latency_first_us > 0.0 {
        out.push_str(&format!(
            "，延迟从开头几秒的 {}（中位数）增长到最后几秒的 {}",
            ms(b.latency_first_us),
            ms(b.latency_last_us)
        ));
    }
    out.push_str(&format!(
        "。在这个负载下它的容量约为 {:.0}/秒：延迟数字随运行时长增长，而不是随负载。把速率降到约 {:.0}/秒 再测，或者用 `yace find-max` 找出它能持续承受的最高速率。",
        b.answered_per_s,
        (b.answered_per_s * 0.8).floor().max(1.0)
    ));
    out
}

/// A capacity step's formula in the reader's language: its figures stay,
/// its few words are replaced.
pub fn formula(lang: Lang, f: &str) -> String {
    if lang == Lang::En {
        return f.to_string();
    }
    let mut out = f.to_string();
    for (en, zh) in [
        (
            "80% of the day's requests in 20% of its hours: ÷ 21,600 s, not 86,400 (× 4)",
            "一天 80% 的请求集中在 20% 的时间里：÷ 21,600 秒，而不是 86,400（× 4）",
        ),
        ("Little's law: ", "利特尔定律："),
        (" requests per view", " 个请求/浏览"),
        (" peak-to-average", " 峰均比"),
        (" peak factor", " 峰值系数"),
        (" visits/s", " 次访问/秒"),
        (" s per visit", " 秒/访问"),
        (" s per request", " 秒/请求"),
        ("% headroom", "% 余量"),
        (
            "% (the page's share of the site)",
            "%（该页面在全站中的份额）",
        ),
        ("% share", "% 占比"),
        (" margin", " 余量系数"),
        (" views of the page / ", " 次该页面的浏览 / "),
        (" views / ", " 次浏览 / "),
        (" req/s", " 请求/秒"),
        (" s", " 秒"),
    ] {
        out = out.replace(en, zh);
    }
    out
}

/// The Chinese of every phrase the renderers translate.
fn zh(en: &str) -> Option<&'static str> {
    Some(match en {
        // The server's side (--monitor).
        "CPU {}% mean, {}% max" => "CPU 平均 {}%，最高 {}%",
        "load {} per CPU at most" => "每个 CPU 的负载最高 {}",
        "{} ms CPU per request ({})" => "每个请求 {} 毫秒 CPU（{}）",
        "{} connections at most" => "最多 {} 个连接",
        " of {}" => "（共 {}）",
        "{}: {} busy at most{}" => "{}：最多 {} 个在忙{}",
        "php-fpm processes" => "php-fpm 进程",
        "Apache workers" => "Apache 工作者",
        "{} — {} ({} failed reads; last: {})" => "{} — {}（{} 次读取失败；最近一次：{}）",
        "{} — DROPPED: {}" => "{} — 已放弃：{}",
        "; blind from {} s to the end ({})" => "；从第 {} 秒起直到结束都读不到（{}）",
        "blind from {} s to the end ({})" => "从第 {} 秒起直到结束都读不到（{}）",
        "  Server      {}" => "  服务器      {}",
        "  Monitors    {}" => "  监控        {}",
        "  PROBLEM     {}" => "  问题        {}",
        "  note        {}" => "  提示        {}",
        "              fix: {}" => "              解决：{}",
        "Server" => "服务器",
        "Monitors" => "监控",
        "Diagnoses" => "诊断",
        "Problem" => "问题",
        "watching cost this client {} CPU-s ({}% of one CPU)" => "监控占用本客户端 {} CPU 秒（单个 CPU 的 {}%）",
        "Note" => "提示",
        "fix" => "解决",
        // The load model, in words.
        "keep-alive" => "长连接（keep-alive）",
        "new connection per request" => "每个请求新建连接",
        "1 thread" => "1 个线程",
        "{} threads" => "{} 个线程",
        "{} connections" => "{} 个连接",
        "{} connections × {} streams" => "{} 个连接 × {} 个流",
        "closed model: {}, {}, {}" => "闭环模型：{}，{}，{}",
        "{} in flight on {}" => "{} 个在途请求，分布在 {} 上",
        "{} in flight" => "{} 个在途请求",
        "open model: up to {}/s, at most {}, {}, {}" => "开环模型：最高 {}/秒，最多 {}，{}，{}",
        "virtual users: up to {}" => "虚拟用户：最多 {} 个",
        " · shard {}, its part: {}" => " · 分片 {}，本分片承担：{}",
        "up to {}/s, at most {} in flight" => "最高 {}/秒，最多 {} 个在途请求",
        "up to {} users" => "最多 {} 个用户",
        ", an iteration every {}" => "，每 {} 一次迭代",
        ", think time" => "，含思考时间",
        // How the run ended.
        "all requests done" => "全部请求完成",
        "duration reached" => "到达设定时长",
        "INTERRUPTED by Ctrl-C: partial result" => "被 Ctrl-C 中断：部分结果",
        "TERMINATED by SIGTERM: partial result" => "被 SIGTERM 终止：部分结果",
        // The terminal summary.
        "  server: {}" => "  服务器：{}",
        "(no handshake)" => "（没有握手）",
        "scenario" => "场景",
        " → … ({} steps)" => " → …（共 {} 步）",
        "verified" => "已验证",
        "NOT VERIFIED (--insecure)" => "未验证（--insecure）",
        "  TLS {} {}, certificate {}; {} full and {} resumed handshakes" => "  TLS {} {}，证书{}；完整握手 {} 次，会话复用 {} 次",
        "  TLS: no handshake completed ({} full, {} resumed)" => "  TLS：没有完成握手（完整 {} 次，复用 {} 次）",
        "no handshake completed" => "没有完成握手",
        "  HTTP/2, {} streams per connection" => "  HTTP/2，每个连接 {} 个流",
        " (server allows {})" => "（服务器允许 {}）",
        "; {} connections retired by GOAWAY" => "；{} 个连接因 GOAWAY 退役",
        "SHORTFALL" => "负载不足",
        "BEHIND" => "跟不上",
        "  Requests    {} started   {} responses   {} responses/s" => "  请求        已发起 {}   响应 {}   {} 响应/秒",
        "              {} errors   {} non-2xx   {} cancelled at end   {} retried" => "              错误 {}   非 2xx {}   结束时取消 {}   重试 {}",
        "  Planned     {} = {} started + {} dropped + {} not yet due at the end" => "  计划        {} = 已发起 {} + 丢弃 {} + 结束时尚未到期 {}",
        "  Planned     {} iterations = {} started + {} missed + {} not yet due at the end" => "  计划        {} 次迭代 = 已开始 {} + 错过 {} + 结束时尚未到期 {}",
        "  Users       {} started, {} never answered (waited the whole run)" => "  用户        已启动 {}，{} 个从未得到响应（等了整个运行）",
        "  Transfer    in {} ({}/s)   out {}   bodies {}" => "  传输        接收 {}（{}/秒）   发送 {}   正文 {}",
        "  Body        {} bytes first; length varied in {} responses ({}–{} bytes): information, not failure" => "  正文        首个 {} 字节；{} 个响应的长度不同（{}–{} 字节）：仅供参考，不算失败",
        "  Body        {} bytes first; length varied in 1 response ({}–{} bytes): information, not failure" => "  正文        首个 {} 字节；1 个响应的长度不同（{}–{} 字节）：仅供参考，不算失败",
        "  Body        {} bytes, every response" => "  正文        每个响应 {} 字节",
        "Latency (from intended send time; coordinated omission corrected)" => "延迟（从计划发送时刻算起；已校正协同遗漏）",
        "Latency (service time, closed model: a stall shows as fewer requests; see --rate)" => "延迟（服务时间，闭环模型：服务器停顿表现为请求变少；见 --rate）",
        "    min {}   mean {}   stdev {}   max {}" => "    最小 {}   平均 {}   标准差 {}   最大 {}",
        "  Service time (from actual send)   mean {}   p50 {}   p99 {}   max {}" => "  服务时间（从实际发送算起）   平均 {}   p50 {}   p99 {}   最大 {}",
        "  Schedule lag (start − intended)   mean {}   p99 {}   max {}" => "  调度延迟（实际发送 − 计划时刻）   平均 {}   p99 {}   最大 {}",
        "   dropped {}" => "   丢弃 {}",
        "  Phases      connect {} / {}{}   wait (to first byte) {} / {}   (mean / p99 per request)" => "  阶段        连接 {} / {}{}   等待（首字节）{} / {}   （每个请求的平均 / p99）",
        "  Connections {} opened, TCP handshake mean {} / p99 {}" => "  连接        已建立 {} 个，TCP 握手平均 {} / p99 {}",
        "  Latency     no complete responses" => "  延迟        没有完整的响应",
        "  Status      {}" => "  状态码      {}",
        "  Checks      {} of {} failed ({}%)" => "  检查        失败 {} 次，共 {} 次（{}%）",
        "  Errors      none" => "  错误        无",
        // Markers made during the run (`m` in the live view).
        "  Markers     {}" => "  标记        {}",
        "Markers" => "标记",
        "marker" => "标记",
        "(no note)" => "（无说明）",
        "  Errors" => "  错误",
        "  Lenient     {} responses: {}; read, then their connections closed" => "  宽松解析    {} 个响应：{}；已读取，随后关闭其连接",
        "  Steps       " => "  步骤        ",
        "requests" => "请求",
        "errors" => "错误",
        "non-2xx" => "非 2xx",
        "  Checks" => "  检查",
        "not run" => "未运行",
        "ok     " => "通过   ",
        "FAIL   " => "失败   ",
        "    {} {} · {}   {} passed, {} failed" => "    {} {} · {}   通过 {}，失败 {}",
        "  Thresholds" => "  阈值",
        " (step {})" => "（步骤 {}）",
        "pass" => "通过",
        "FAIL" => "失败",
        "    {} {}{}   actual {}" => "    {} {}{}   实际 {}",
        "  Client      {}, {} CPU-s, busiest thread {}% busy{}" => "  客户端      {}，{} CPU 秒，最忙线程 {}% 繁忙{}",
        "              watching cost {}" => "              观察开销 {}",
        " ({}% of the workers' CPU)" => "（占工作线程 CPU 的 {}%）",
        "live view" => "终端实时视图",
        "live page" => "实时网页",
        "metrics exporters" => "指标导出",
        " (SATURATED)" => "（已饱和）",
        " (not the bottleneck)" => "（不是瓶颈）",
        "  warning: {}" => "  警告：{}",
        "  Responses/s {}  {}–{} over {} s{}" => "  响应/秒     {}  {}–{}，共 {} 秒{}",
        ", each mark the slowest of {} s" => "，每格为 {} 秒中最慢的一秒",
        "  Latency histogram (log scale)" => "  延迟直方图（对数刻度）",
        // Markdown and HTML.
        "Partial result" => "部分结果",
        "The figures cover what was done." => "这些数字只涵盖已完成的部分。",
        "Shortfall" => "负载不足",
        "Fell behind" => "服务器跟不上",
        "Summary" => "概要",
        "Latency" => "延迟",
        "Responses and errors" => "响应与错误",
        "Steps" => "步骤",
        "Checks" => "检查",
        "Thresholds" => "阈值",
        "Warnings" => "警告",
        "Per second" => "每秒",
        "No complete responses." => "没有完整的响应。",
        "No errors." => "没有错误。",
        "started {} · yace {}" => "开始于 {} · yace {}",
        "server" => "服务器",
        "client" => "客户端",
        "{} ({} CPUs, {} allowed), {} thread(s), {} CPU-s, busiest thread {}%{}" => "{}（{} 个 CPU，可用 {} 个），{} 个线程，{} CPU 秒，最忙线程 {}%{}",
        "saturated" => "已饱和",
        "second" => "秒",
        "responses" => "响应",
        "responses/s" => "响应/秒",
        "cancelled" => "已取消",
        "dropped" => "丢弃",
        "retried" => "重试",
        "status" => "状态码",
        "error" => "错误",
        "likely cause" => "可能的原因",
        "step" => "步骤",
        "check" => "检查",
        "passed" => "通过",
        "failed" => "失败",
        "threshold" => "阈值",
        "actual" => "实际",
        "phase" => "阶段",
        "min" => "最小",
        "mean" => "平均",
        "stdev" => "标准差",
        "max" => "最大",
        "latency" => "延迟",
        "service time" => "服务时间",
        "schedule lag" => "调度延迟",
        "connect" => "连接",
        "connect (per request)" => "连接（每个请求）",
        "tls" => "TLS",
        "TLS" => "TLS",
        "wait (to first byte)" => "等待（首字节）",
        "processing" => "处理",
        "TCP handshake (per connection)" => "TCP 握手（每个连接）",
        "Transfer: in {} ({}/s), out {}, bodies {}; {} connections opened." => "传输：接收 {}（{}/秒），发送 {}，正文 {}；建立连接 {} 个。",
        "Latency counts from when each request was due (coordinated omission corrected); service time from when it was sent." => "延迟从每个请求的计划时刻算起（已校正协同遗漏）；服务时间从实际发送算起。",
        "Closed model: latency is service time. Each connection waits for its answer, so a server stall shows as fewer requests, not as latency (coordinated omission); an open-model run (`--rate`) at the measured throughput shows it." => "闭环模型：延迟即服务时间。每个连接都等待上一个响应，所以服务器的停顿表现为请求变少，而不是延迟变大（协同遗漏）；用测得的吞吐量做一次开环运行（`--rate`）才能看到它。",
        // HTML.
        "yace load test report" => "yace 压测报告",
        "load" => "负载",
        "when" => "时间",
        "client machine" => "客户端机器",
        "server says" => "服务器标识",
        "certificate" => "证书",
        "{} full and {} resumed handshakes" => "完整握手 {} 次，会话复用 {} 次",
        "{} streams per connection" => "每个连接 {} 个流",
        "<strong>NOT verified</strong> (--insecure)" => "<strong>未验证</strong>（--insecure）",
        "<strong>Partial result</strong>: {}. The figures cover what was done." => "<strong>部分结果</strong>：{}。这些数字只涵盖已完成的部分。",
        "<strong>Shortfall</strong>: {}" => "<strong>负载不足</strong>：{}",
        "<strong>The server fell behind</strong>: {}" => "<strong>服务器跟不上</strong>：{}",
        "<strong>{} of {} requests failed</strong> ({}%): see Errors below." => "<strong>有 {} 个请求失败</strong>（共 {} 个，{}%）：见下方“错误”。",
        "<strong>{} of {} responses were not 2xx</strong> ({}%): see the status codes below." => "<strong>有 {} 个响应不是 2xx</strong>（共 {} 个，{}%）：见下方状态码。",
        "<strong>{} check(s) failed</strong>: see Checks below." => "<strong>{} 项检查失败</strong>：见下方“检查”。",
        "{} of {} threshold(s) breached" => "{} 个阈值未达标（共 {} 个）",
        "Completed with problems" => "已完成，但有问题",
        "All {} thresholds passed, with problems" => "全部 {} 个阈值通过，但有问题",
        "All {} threshold(s) passed" => "全部 {} 个阈值通过",
        "Completed" => "已完成",
        "{} · partial result" => "{} · 部分结果",
        "No validity warning." => "没有有效性警告。",
        "transfer in" => "接收流量",
        "Latency counts from when each request was due (coordinated omission corrected)." => "延迟从每个请求的计划时刻算起（已校正协同遗漏）。",
        "Closed model: latency is service time; a server stall shows as fewer responses, not as latency (run an open model with --rate to see it)." => "闭环模型：延迟即服务时间；服务器的停顿表现为响应变少，而不是延迟变大（用 --rate 做开环运行才能看到）。",
        "Charts" => "图表",
        "Hover a chart for exact values; the time charts share one cursor. Click a legend entry to hide its line. \"show data\" opens the figures drawn." => "鼠标悬停可查看精确数值；各时间图共用一个光标。点击图例可隐藏对应的线。“显示数据”列出图中的数字。",
        "show data" => "显示数据",
        "log scale" => "对数刻度",
        "time" => "时间",
        "percentile" => "百分位",
        "latency from" => "延迟起点",
        "Each row covers {} s. Every second is in <code>yace report FILE -F csv</code>." => "每行涵盖 {} 秒。逐秒数据见 <code>yace report FILE -F csv</code>。",
        "Figures" => "数据",
        "Phases" => "阶段",
        "Comparing {} runs" => "比较 {} 次运行",
        "vs [1]" => "对比 [1]",
        "Transfer: in {} ({}/s), out {}, bodies {}; {} connections opened; client {} thread(s), {} CPU-s, busiest thread {}% busy{}." => "传输：接收 {}（{}/秒），发送 {}，正文 {}；建立连接 {} 个；客户端 {} 个线程，{} CPU 秒，最忙线程 {}% 繁忙{}。",
        " — <strong>saturated</strong>" => " — <strong>已饱和</strong>",
        "Made by yace {} from the <code>yace.result.v1</code> document(s), which this page embeds whole: <code>yace report THIS.html -F json</code> gets it back, and <code>yace report THIS.html other.json</code> compares it." => "由 yace {} 根据 <code>yace.result.v1</code> 结果文档生成，本页完整内嵌了它：<code>yace report 本文件.html -F json</code> 可取回结果，<code>yace report 本文件.html other.json</code> 可与其他结果比较。",
        "Charts drawn with uPlot 1.6.32 (MIT licence, © Leon Sorokin), inlined: this page makes no network request." => "图表由 uPlot 1.6.32（MIT 许可，© Leon Sorokin）绘制，已内嵌：本页不发出任何网络请求。",
        // Chart titles, notes and lines.
        "Responses per second" => "每秒响应数",
        "Latency over time" => "延迟随时间变化",
        "Status classes and errors per second" => "每秒状态码类别与错误",
        "Requests in flight and new connections" => "在途请求与新建连接",
        "The client itself" => "客户端自身",
        "Errors per second" => "每秒错误数",
        "Client CPU" => "客户端 CPU",
        "Latency by percentile" => "各百分位的延迟",
        "Latency histogram" => "延迟直方图",
        "errors/s" => "错误/秒",
        "dropped/s (not sent in time)" => "丢弃/秒（未能按时发送）",
        "offered rate (planned)" => "计划速率",
        "users (planned)" => "计划用户数",
        "users (as steered)" => "用户数（按调节）",
        "users (active)" => "活跃用户数",
        "in flight" => "在途",
        "connections opened/s" => "新建连接/秒",
        "client CPU (cores)" => "客户端 CPU（核）",
        "client CPU" => "客户端 CPU",
        "schedule lag p99" => "调度延迟 p99",
        "service time (from actual send)" => "服务时间（从实际发送算起）",
        "share of responses" => "响应占比",
        "TCP connect (per connection)" => "TCP 连接（每个连接）",
        "TLS handshake" => "TLS 握手",
        "wait (sent → first byte)" => "等待（发送 → 首字节）",
        "processing (sent → last byte)" => "处理（发送 → 末字节）",
        "Complete responses (any status) and failed requests per second." => "每秒完整响应（任何状态码）与失败请求。",
        " The dashed line is the rate the plan offered." => "虚线是计划提供的速率。",
        " The dashed line is the rate offered: the plan's, as it was steered during the run." => "虚线是实际提供的速率：计划的速率，按运行中的调节改变。",
        "offered rate (as steered)" => "提供的速率（按调节）",
        "paused" => "暂停",
        " The dashed line (right axis) is the number of virtual users the plan ran." => "虚线（右轴）是计划运行的虚拟用户数。",
        " The dashed line (right axis) is the number of virtual users the plan ran, as it was steered during the run." => "虚线（右轴）是计划运行的虚拟用户数，按运行中的调节。",
        " The grey line (right axis) is the users that were active, measured." => "灰线（右轴）是实际测得的活跃用户数。",
        "Responses by status class (solid) and failed requests by cause (dashed), per second." => "每秒按状态码类别统计的响应（实线）与按原因统计的失败请求（虚线）。",
        "Requests in flight (mean over each second, sampled every 100 ms) and connections opened per second (right axis)." => "在途请求（每秒平均，每 100 毫秒采样一次）与每秒新建连接（右轴）。",
        "CPU used by yace's {} worker thread(s), in cores ({} allowed){}. A client near its limit measures itself, not the server." => "yace 的 {} 个工作线程所用的 CPU，以核为单位（可用 {} 个）{}。接近极限的客户端测到的是它自己，而不是服务器。",
        "; and how late requests were sent (schedule lag p99, right axis)" => "；以及请求发送的滞后（调度延迟 p99，右轴）",
        "Latency of each second's responses, from when each request was due (coordinated omission corrected)." => "每秒响应的延迟，从每个请求的计划时刻算起（已校正协同遗漏）。",
        "Latency of each second's responses. Closed model: this is service time; a stall shows as fewer responses, not as latency." => "每秒响应的延迟。闭环模型：这是服务时间；停顿表现为响应变少，而不是延迟变大。",
        "Each run on its own time since start." => "每次运行按各自开始后的时间对齐。",
        "p99 (solid) and p50 (dashed) of each run." => "每次运行的 p99（实线）与 p50（虚线）。",
        "Failed requests per second (non-2xx responses are not errors)." => "每秒失败的请求（非 2xx 响应不算错误）。",
        "CPU used by yace's worker threads in each run, in cores." => "每次运行中 yace 工作线程所用的 CPU，以核为单位。",
        "Every percentile from the run's full-resolution histogram: the x axis stretches the tail (90 %, 99 %, 99.9 % … are equally spaced), where users wait longest." => "来自全分辨率直方图的每个百分位：横轴拉伸了尾部（90%、99%、99.9% …… 等距排列），那里是用户等得最久的地方。",
        "Where a request's time went, by percentile: connecting (once per connection), the TLS handshake, waiting for the first byte, and the whole exchange after sending." => "按百分位看请求的时间花在哪里：建立连接（每个连接一次）、TLS 握手、等待首字节，以及发送后的整个交换。",
        "Share of responses by latency, in buckets of equal width on a log scale (each bar from its latency to the next)." => "按延迟统计的响应占比，桶在对数刻度上等宽（每根柱子从它的延迟到下一根）。",
        " Each point covers {} s: rates are the mean, with the slowest and fastest second as a band; latencies are the highest of those seconds." => "每个点涵盖 {} 秒：速率取平均值，最慢与最快的一秒画成色带；延迟取这些秒中的最高值。",
        // Comparisons.
        "a comparison of single runs cannot tell whether a difference is real: repeat each run and compare the spread (yace compare and yace lab do this with statistics)" => "单次运行之间的比较无法判断差异是否真实：请重复每次运行并比较离散程度（yace compare 和 yace lab 会用统计方法完成）",
        "the runs used different load models or settings (see each run's model)" => "这些运行使用了不同的负载模型或设置（见各自的模型）",
        "{} is a partial result (interrupted)" => "{} 是部分结果（被中断）",
        "{} has {} validity warning(s): see its own report" => "{} 有 {} 条有效性警告：见它自己的报告",
        "Comparing {} runs (differences to the first)" => "比较 {} 次运行（与第一次的差异）",
        "note: " => "注：",
        "Notes" => "注意",
        "latency p50" => "延迟 p50",
        "latency p90" => "延迟 p90",
        "latency p99" => "延迟 p99",
        "latency p99.9" => "延迟 p99.9",
        "latency max" => "延迟最大值",
        "transfer in/s" => "接收流量/秒",
        "client CPU-s" => "客户端 CPU 秒",
        // find-max.
        "pass (close to an SLO)" => "通过（接近 SLO）",
        "NOT VALID" => "无效",
        "Max rate under the SLOs: {}/s" => "满足 SLO 的最高速率：{}/秒",
        ", between {} and {} (which failed)" => "，介于 {} 与 {}（未通过）之间",
        " — at least: the SLOs still held at the highest rate searched" => " —— 至少如此：搜索的最高速率下 SLO 仍然满足",
        " — not confirmed: the search ran out of time or trials" => " —— 未经确认：搜索的时间或次数已用完",
        " — interrupted before the search ended: not confirmed" => " —— 搜索结束前被中断：未经确认",
        "Recommended operating rate: {}–{}/s (70–80% of it)." => "建议运行速率：{}–{}/秒（其 70–80%）。",
        "Stopped: the client, not the server, was the limit." => "已停止：瓶颈在客户端，而不是服务器。",
        "No rate held the SLOs." => "没有任何速率满足 SLO。",
        "find-max {} — SLOs: {}" => "find-max {} —— SLO：{}",
        "started {}" => "开始于 {}",
        "stage" => "阶段",
        "rate/s" => "速率/秒",
        "for" => "时长",
        "verdict" => "结论",
        "offered rate" => "提供的速率",
        "p99, trial passed" => "p99（通过的试验）",
        "p99, trial failed" => "p99（未通过的试验）",
        "Latency against the offered rate" => "延迟与提供速率的关系",
        "Each trial's p99 at the rate it offered (log scales); the dashed line is the latency SLO. The answer is the highest rate that passed below the lowest that failed." => "每次试验在其提供速率下的 p99（对数刻度）；虚线是延迟 SLO。答案是低于最低未通过速率的最高通过速率。",
        "Trials" => "试验",
        "{}/s (bracket {}–{})" => "{}/秒（区间 {}–{}）",
        "at least {}/s" => "至少 {}/秒",
        "Frontier (the highest rate at which each level holds):" => "前沿（每一级 SLO 下的最高速率）：",
        "Frontier" => "前沿",
        "max rate" => "最高速率",
        "pass, close to an SLO: tried again" => "通过，接近 SLO：再试一次",
        "  {}  {} {}/s for {} s   {} responses/s  p99 {}  errors {}%   {}{}" => "  {}  {} {}/秒 持续 {} 秒   {} 响应/秒  p99 {}  错误 {}%   {}{}",
        "  from {}/s, at most {}/s; trials of {} s, {} s near the answer, {} s to confirm; at most {}" => "  从 {}/秒开始，最高 {}/秒；每次试验 {} 秒，接近答案时 {} 秒，确认 {} 秒；总时长至多 {}",
        "Searching the highest rate at which {} hold — {}" => "搜索满足 {} 的最高速率 — {}",
        "Searching the highest rate at which {} holds — {}" => "搜索满足 {} 的最高速率 — {}",
        " and " => " 且 ",
        "  (an earlier trial, judged again)" => "  （之前的试验，重新评判）",
        "; p99 there {}" => "；该处 p99 为 {}",
        " — at least: the SLOs still held at --max-rate {}; raise it to search higher" => " — 至少如此：在 --max-rate {} 时 SLO 仍满足；调高它可以继续向上搜索",
        " — not confirmed: the search ran out of time or trials; the true maximum may be higher or lower" => " — 未确认：搜索用完了时间或试验次数；真实最大值可能更高或更低",
        "Recommended operating rate: {}–{}/s (70–80% of it), headroom for bursts and for what the search cannot see." => "建议运行速率：{}–{}/秒（其 70–80%），为突发和搜索看不到的情况留出余量。",
        "What ran out at {}/s (the monitors):" => "在 {}/秒时耗尽的资源（来自监控）：",
        "No rate held the SLOs before the search stopped." => "搜索停止前没有任何速率满足 SLO。",
        "The SLOs failed even at --min-rate {}/s: the server cannot meet them at any rate searched." => "即使在 --min-rate {}/秒时 SLO 也未满足：在搜索过的任何速率下服务器都达不到。",
        "Stopped: the client, not the server, was the limit at {}/s — {}. The answer would be the client's capacity, not the server's." => "已停止：在 {}/秒时瓶颈是客户端而不是服务器 — {}。此时的答案将是客户端的能力，而不是服务器的。",
        "  the next trial ({} s) would pass --max-time {}: stopping" => "  下一次试验（{} 秒）将超过 --max-time {}：停止",
        "  interrupted: the trial at {}/s did not finish" => "  已中断：{}/秒的试验没有完成",
        "bracket" => "定界",
        "bisect" => "二分",
        "repeat" => "重复",
        "recheck" => "复核",
        "confirm" => "确认",
        // yace capacity.
        "What {} req/s supports" => "{} 请求/秒能支撑多少",
        "  {} req/s supports about {} views a day of the tested page (at its share of the site) with {}% in reserve." => "  {} 请求/秒约可支撑被测页面每天 {} 次浏览（按它在全站中的份额），并保留 {}% 余量。",
        "The rate to hold for {} views a day of the tested page (the site's rate = the page's ÷ its share)" => "被测页面每天 {} 次浏览需要承受的速率（全站速率 = 该页面的速率 ÷ 它的份额）",
        "  The measured maximum under {} is {} req/s: {}× the {} req/s required at the peak, {}× with burst headroom." => "  在 {} 下测得的最高速率为 {} 请求/秒：{} 倍于峰值所需的 {} 请求/秒，含突发余量时为 {} 倍。",
        "  The lab's best point ({}) held {} req/s: {}× the {} req/s required at the peak, {}× with burst headroom." => "  实验中最好的测量点（{}）达到 {} 请求/秒：{} 倍于峰值所需的 {} 请求/秒，含突发余量时为 {} 倍。",
        "{}, median of {} runs" => "{}，{} 次运行的中位数",
        "  Servers like it for this load: {} (the {} req/s with burst headroom ÷ {} req/s usable each, keeping {}% in reserve); assumes the servers share the load evenly and nothing else is the bottleneck." => "  这样的服务器需要 {} 台（含突发余量的 {} 请求/秒 ÷ 每台可用 {} 请求/秒，保留 {}% 余量）；假设负载均匀分摊，且没有其他瓶颈。",
        "  The server must hold {} req/s at the peak ({} req/s with burst headroom):" => "  服务器在峰值时必须承受 {} 请求/秒（含突发余量为 {} 请求/秒）：",
        "  run `yace run URL --rate {} -d 60s` and check the latency there." => "  运行 `yace run URL --rate {} -d 60s`，看看这个速率下的延迟。",
        "assumes: " => "假设：",
        "the page's average rate over the day" => "该页面的全天平均速率",
        "traffic spread over the whole day" => "流量均匀分布在一整天",
        "requests, not views" => "按请求计，而非浏览",
        "every view also fetches its assets and API calls from this server" => "每次浏览还会从这台服务器获取静态资源和 API",
        "the site's rate: the page's ÷ its share" => "全站速率：该页面的速率 ÷ 它的份额",
        "the tested page is this share of the site's traffic; the rest of the site costs the server what the page does" => "被测页面占全站流量的这个份额；站点其余页面对服务器的开销与该页面相同",
        "peak" => "峰值",
        "the busiest moment carries this many times the day's average" => "最忙的时刻是全天平均的这么多倍",
        "peak (80/20)" => "峰值（80/20）",
        "the 80/20 rule of thumb for a day's traffic" => "一天流量的 80/20 经验法则",
        "with burst headroom" => "含突发余量",
        "arrivals are Poisson: a second at the peak exceeds this about 0.1% of the time" => "到达服从泊松分布：峰值时约有 0.1% 的秒会超过这个值",
        "concurrent users at the peak" => "峰值并发用户数",
        "each visit lasts this long and holds one user for all of it" => "每次访问持续这么久，期间占用一个用户",
        "usable rate" => "可用速率",
        "the server is not run at its measured limit" => "服务器不在测得的极限上运行",
        "the tested page's views a day" => "被测页面每天的浏览量",
        "the traffic shape of --share, --requests-per-view and --peak" => "由 --share、--requests-per-view 和 --peak 描述的流量形态",
        "workers (pm.max_children, MaxRequestWorkers)" => "工作进程数（pm.max_children、MaxRequestWorkers）",
        "a worker serves one request at a time for the whole service time" => "一个工作进程在整个服务时间内一次只处理一个请求",
        "workers that fit in memory" => "内存能容纳的工作进程数",
        "each worker's resident memory stays as measured (PHP's memory_limit bounds its peak)" => "每个工作进程的常驻内存保持测得的大小（PHP 的 memory_limit 限制其峰值）",
        "  Memory, not the rate, limits the pool: {} workers fit, {} are needed — more memory, lighter workers, or more servers." => "  限制进程池的是内存而不是速率：只放得下 {} 个工作进程，却需要 {} 个——加内存、减轻工作进程，或增加服务器。",
        "  Set the pool to {} workers: the rate needs them and memory holds up to {}." => "  把进程池设为 {} 个工作进程：速率需要这么多，内存最多容纳 {} 个。",
        "req/s" => "请求/秒",
        "users" => "用户",
        "views/day" => "浏览/天",
        "workers" => "进程",
        // The lab (yace lab report, its page, yace compare).
        "throughput" => "吞吐量",
        "server CPU per request" => "每请求服务器 CPU",
        "better" => "更好",
        "worse" => "更差",
        "no difference" => "无差异",
        "too few runs" => "运行太少",
        "{} runs each" => "各 {} 次运行",
        "{} and {} runs" => "分别 {} 次和 {} 次运行",
        "adjusted {}" => "校正后 {}",
        "too few runs to tell: the test needs ≥ {} runs per side ({})" => "运行次数太少，无法判断：检验每边至少需要 {} 次运行（{}）",
        "{} higher by {}% ({}% CI {} to {}, {}, {})" => "{}高 {}%（{}% 置信区间 {} 至 {}，{}，{}）",
        "{} lower by {}% ({}% CI {} to {}, {}, {})" => "{}低 {}%（{}% 置信区间 {} 至 {}，{}，{}）",
        "no meaningful difference: {}, not clearly beyond ±{}%" => "没有实际意义的差异：{}，未明显超出 ±{}%",
        "no significant difference in {} ({}, {})" => "{}没有显著差异（{}，{}）",
        "coherency-bound: throughput peaks near N = {}" => "受相干性限制：吞吐量在 N = {} 附近达到峰值",
        "scales nearly linearly over the measured range" => "在测量范围内近似线性扩展",
        "contention-bound: throughput levels off towards λ/σ = {}" => "受争用限制：吞吐量趋于 λ/σ = {}",
        "{} (λ = {} per client, σ = {} contention, κ = {} coherency, R² = {})" => "{}（λ = {} 每客户端，σ = {} 争用，κ = {} 相干，R² = {}）",
        "not enough samples" => "样本不足",
        "randomized-block" => "随机区组",
        "sequential" => "依次执行",
        "Experiment {} — {} of {} runs done ({} repetitions, {} order, seed {})" => "实验 {} —— 已完成 {} 次运行，共 {} 次（{} 次重复，{}顺序，随机种子 {}）",
        "  {} skipped by a stop rule, {} failed" => "  {} 次因停止规则跳过，{} 次失败",
        "{}: repetition {} lies far from the median (an outlier, kept)" => "{}：第 {} 次重复远离中位数（离群值，已保留）",
        "the client was the limit" => "瓶颈在客户端",
        "its throughput drifted during the run" => "运行中吞吐量发生了漂移",
        "{}: repetition {} left out: {}" => "{}：第 {} 次重复未计入：{}",
        "Compared with {} (Welch's t on logs, Holm-adjusted over {} comparison; a change under {}% counts as none)" => "与 {} 比较（对数上的 Welch t 检验，对 {} 项比较做 Holm 校正；变化小于 {}% 视为没有变化）",
        "Compared with {} (Welch's t on logs, Holm-adjusted over {} comparisons; a change under {}% counts as none)" => "与 {} 比较（对数上的 Welch t 检验，对 {} 项比较做 Holm 校正；变化小于 {}% 视为没有变化）",
        "knee at {} = {}: beyond it throughput grows much more slowly" => "拐点在 {} = {}：超过它，吞吐量的增长明显放缓",
        "{} departs at {} = {}: beyond it latency climbs steeply" => "{} 在 {} = {} 处开始攀升：超过它，延迟急剧上升",
        "{} departs at {} = {}" => "{} 在 {} = {} 处开始攀升",
        "Per point: median [95% confidence interval] over repetitions" => "各测量点：各次重复的中位数 [95% 置信区间]",
        "target" => "目标",
        "point" => "测量点",
        "runs" => "运行",
        "server CPU/request" => "每请求服务器 CPU",
        "  (p99: every run's responses merged, with its exact 95% order-statistic interval; ≥ where too few lie beyond it for an upper bound; about {} responses a point put it within p98.5–p99.5)" => "  （p99：合并各次运行的全部响应，附精确的 95% 次序统计量区间；超出它的响应太少、无法给出上界时记为 ≥；每个测试点约 {} 个响应可使其落在 p98.5–p99.5 之内）",
        "  (no interval where fewer than 6 runs count: an exact 95% interval of a median needs 6)" => "  （计入的运行少于 6 次时不给区间：中位数的精确 95% 区间需要 6 次）",
        "Scalability of {} (throughput against {}, Universal Scalability Law)" => "{} 的可扩展性（吞吐量与 {} 的关系，通用可扩展性定律）",
        "no fit (too few points, or the points do not follow the law)" => "无法拟合（测量点太少，或数据不符合该定律）",
        "left out (the client was the limit): {}" => "未计入（瓶颈在客户端）：{}",
        "problem: {}" => "问题：{}",
        "Per point" => "各测量点",
        "Median [95% confidence interval] over repetitions." => "各次重复的中位数 [95% 置信区间]。",
        "Compared with {}" => "与 {} 比较",
        "Welch's t on logs, Holm-adjusted over {} comparisons; a change under {}% counts as none." => "对数上的 Welch t 检验，对 {} 项比较做 Holm 校正；变化小于 {}% 视为没有变化。",
        "Welch's t on logs, Holm-adjusted over {} comparison; a change under {}% counts as none." => "对数上的 Welch t 检验，对 {} 项比较做 Holm 校正；变化小于 {}% 视为没有变化。",
        "metric" => "指标",
        "Scalability of {}" => "{} 的可扩展性",
        "knee at {} = {}" => "拐点在 {} = {}",
        "{}% within one run only: batch means {} [{}–{}] and {} [{}–{}] {}; one run a side cannot say whether it would hold again — repeat the runs" => "{}%，仅为单次运行内的比较：批均值 {} [{}–{}] 与 {} [{}–{}] {}；每边只有一次运行，无法判断它能否重现——请重复运行",
        "{}% within one run only: p99 by 5-second blocks {} [{}–{}] and {} [{}–{}] {}; one run a side cannot say whether it would hold again — repeat the runs" => "{}%，仅为单次运行内的比较：按 5 秒分块的 p99 {} [{}–{}] 与 {} [{}–{}] {}；每边只有一次运行，无法判断它能否重现——请重复运行",
        "overlap" => "有重叠",
        "do not overlap" => "没有重叠",
        "one run a side cannot say whether a difference is real: repeat the runs (runs of 12 s or more also get a within-run interval)" => "每边只有一次运行，无法判断差异是否真实：请重复运行（12 秒或更长的运行还会给出运行内的区间）",
        "{} results -- {} results: medians [95% CI] over results; Welch's t on logs, Holm-adjusted over the table; a change under {}% counts as none" => "{} 个结果 -- {} 个结果：各结果的中位数 [95% 置信区间]；对数上的 Welch t 检验，对整张表做 Holm 校正；变化小于 {}% 视为没有变化",
        "geometric mean of the change over {} URLs" => "{} 个 URL 上变化的几何平均",
        "(no interval with fewer than 6 results a side: an exact 95% interval of a median needs 6)" => "（每边少于 6 个结果时不给区间：中位数的精确 95% 区间需要 6 个）",
        "{} results against {}: medians [95% CI]; Welch's t on logs, Holm-adjusted; a change under {}% counts as none." => "{} 个结果对比 {} 个结果：中位数 [95% 置信区间]；对数上的 Welch t 检验，Holm 校正；变化小于 {}% 视为没有变化。",
        "before" => "之前",
        "after" => "之后",
        "geomean" => "几何平均",
        "yace lab experiment" => "yace 实验",
        "Each dot is one run. Hover a chart for the figures; click a legend entry to hide a target. \"show data\" opens the figures drawn." => "每个点是一次运行。鼠标悬停可查看数值；点击图例可隐藏对应的目标。“显示数据”列出图中的数字。",
        "Made by yace {} from <code>experiment.json</code> and the runs' results: <code>yace lab report DIR -F html</code> makes it again; each run's own report is linked from the table of points." => "由 yace {} 根据 <code>experiment.json</code> 和各次运行的结果生成：<code>yace lab report 目录 -F html</code> 可重新生成；每次运行自己的报告链接在测量点表格中。",
        "{} (baseline)" => "{}（基准）",
        "targets" => "目标",
        "points" => "测量点",
        "repetitions" => "重复",
        "{} each, {} order, seed {}" => "每点 {} 次，{}顺序，随机种子 {}",
        "{} of {} done · {} skipped · {} failed" => "完成 {} 次（共 {} 次）· 跳过 {} 次 · 失败 {} 次",
        " · {} to go" => " · 还剩 {} 次",
        "practical threshold" => "实际意义阈值",
        "a change under {}% counts as none" => "变化小于 {}% 视为没有变化",
        "file" => "文件",
        "one (nothing swept)" => "一个（没有扫描参数）",
        "{} ({} points)" => "{}（{} 个测量点）",
        "{} of {} runs done, with problems" => "已完成 {} 次运行（共 {} 次），但有问题",
        "{} of {} runs done: the experiment is not finished" => "已完成 {} 次运行（共 {} 次）：实验尚未结束",
        "{} of {} runs done, the others skipped by a stop rule" => "已完成 {} 次运行（共 {} 次），其余因停止规则跳过",
        "All {} runs done" => "全部 {} 次运行已完成",
        "{} {}, repetition {}: failed: {}" => "{} {}，第 {} 次重复：失败：{}",
        "{} {}: skipped ({})" => "{} {}：已跳过（{}）",
        "`yace lab resume DIR` does the rest without redoing finished runs." => "`yace lab resume 目录` 会完成其余运行，已完成的不会重做。",
        "Throughput" => "吞吐量",
        "Responses per second over each run's steady window (its first and last second left out)." => "每次运行稳定阶段（去掉第一秒和最后一秒）的每秒响应数。",
        "Latency p50" => "延迟 p50",
        "Each run's median latency." => "每次运行的延迟中位数。",
        "Latency p99" => "延迟 p99",
        "Each run's 99th percentile latency, however few its responses; the table's interval is the pooled runs' (order statistics of their merged histograms)." => "每次运行的第 99 百分位延迟，无论响应多少；表中的区间来自合并后的各次运行（合并直方图的次序统计量）。",
        "Errors" => "错误",
        "Failed requests as a share of each run's finished requests." => "失败请求占每次运行已完成请求的比例。",
        "Server CPU per request" => "每请求服务器 CPU",
        "The server's CPU time per response, from the monitors (--monitor)." => "服务器处理每个响应所用的 CPU 时间，来自监控（--monitor）。",
        "Server CPU busy" => "服务器 CPU 繁忙度",
        "The server's mean CPU busy over each run, as a share of all its CPUs (--monitor system, node: or ssh:)." => "每次运行期间服务器 CPU 的平均繁忙度，占其全部 CPU 的比例（--monitor system、node: 或 ssh:）。",
        "Server load per CPU" => "服务器每 CPU 负载",
        "The highest 1-minute load average per CPU during each run (seed 002's `uptime`); above 1 work waits for a CPU." => "每次运行期间每个 CPU 的 1 分钟平均负载最高值（即种子 002 中的 `uptime`）；超过 1 表示有任务在等待 CPU。",
        "Busy workers" => "忙碌的工作进程",
        "The most workers busy at once during each run, from the status page (php-fpm active processes, Apache busy workers)." => "每次运行期间同时忙碌的工作进程最多有多少，来自状态页（php-fpm 的活动进程、Apache 的忙碌 worker）。",
        "knee of {}: {}" => "{} 的拐点：{}",
        "{} of {} departs: {}" => "{}（{}）开始攀升：{}",
        "{} — USL fit" => "{} —— USL 拟合",
        "The line joins the medians; the bars are their 95% confidence intervals (a point needs 6 runs for one)." => "折线连接各中位数；误差线是其 95% 置信区间（一个测量点需要 6 次运行才有区间）。",
        "The bar across is the median; the whiskers are its 95% confidence interval (a point needs 6 runs for one)." => "横条是中位数；须线是其 95% 置信区间（一个测量点需要 6 次运行才有区间）。",
        "The dashed curve is the Universal Scalability Law fitted to the medians." => "虚线是按中位数拟合的通用可扩展性定律（USL）。",
        "The vertical line marks the knee: beyond it throughput grows much more slowly." => "竖线标出拐点：超过它，吞吐量的增长明显放缓。",
        "The vertical line marks where latency departs: beyond it latency climbs steeply." => "竖线标出延迟开始攀升之处：超过它，延迟急剧上升。",
        "No p99: a run needs 10,000 responses for one, and these had at most {}." => "没有 p99：一次运行需要 10,000 个响应才给出 p99，而这些运行最多只有 {} 个。",
        "No errors in any run." => "所有运行都没有错误。",
        "median" => "中位数",
        "in words" => "说明",
        "Scalability" => "可扩展性",
        "Median [95% confidence interval] over repetitions. Each run's number opens its own report." => "各次重复的中位数 [95% 置信区间]。点击运行编号可打开该次运行自己的报告。",
        "repetition {}: {}" => "第 {} 次重复：{}",
        "repetition {}" => "第 {} 次重复",
        "skipped" => "已跳过",
        "to go" => "尚未运行",
        "No interval where fewer than 6 runs count: an exact 95% interval of a median needs 6." => "计入的运行少于 6 次时不给区间：中位数的精确 95% 区间需要 6 次。",
        "The experiment's page, with charts: {}" => "实验页面（含图表）：{}",
        _ => return None,
    })
}

/// What an outcome means and what to do, in Chinese (English: the
/// outcome's own `explain`).
pub fn explain(lang: Lang, o: sample::Outcome) -> &'static str {
    use sample::Outcome as O;
    if lang == Lang::En {
        return o.explain();
    }
    match o {
        O::Response => "收到完整的响应",
        O::ConnectRefused => "连接被拒绝：目标端口上没有服务在监听，或服务器的监听队列已满",
        O::ConnectTimeout => "连接超时：服务器或网络没有在时限内完成 TCP 握手（SYN 队列满、防火墙丢包）",
        O::ConnectError => "连接失败：网络或地址错误",
        O::Reset => "连接被对端重置（RST）：服务器崩溃、超出限制或主动丢弃了连接",
        O::ClosedBeforeResponse => "服务器在响应前关闭了连接：检查它的 keep-alive 超时和单连接请求数上限",
        O::Timeout => "在超时之内没有收到完整的响应：服务器在排队或卡住（后端慢、会话锁）；只有当这样的延迟可以接受时才调大 --timeout",
        O::IncompleteBody => "响应正文不完整：连接在正文读完之前结束",
        O::ProtocolError => "响应不符合 HTTP 协议：见下方的细节",
        O::HeaderTooLarge => "响应头超过了上限（--max-head / --max-fields）",
        O::ClientResource => "客户端资源不足（文件描述符或本地端口）：这是客户端的问题，不是服务器的；运行 `yace doctor`",
        O::TlsUnknownCa => "TLS：证书由未知的 CA 签发；用 --cacert 指定 CA",
        O::TlsHostnameMismatch => "TLS：证书与主机名不符",
        O::TlsExpired => "TLS：证书已过期或尚未生效",
        O::TlsHandshake => "TLS 握手失败",
        O::TlsNotTls => "TLS：对端说的不是 TLS（是不是用了 https:// 访问 http 端口？）",
        O::StreamReset => "HTTP/2：服务器重置了这个流（RST_STREAM）",
        O::StreamRefused => "HTTP/2：服务器拒绝了这个流（超出并发流上限或 GOAWAY 之后）",
        O::NoHttp2 => "服务器不支持 HTTP/2",
        O::Cancelled => "运行结束时仍在途中，已取消（不算错误）",
        O::Dropped => "开环模型：请求未能按时发送而被丢弃",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_come_from_the_flag_the_variable_or_the_locale() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Lang::from_env(env(&[])), Lang::En);
        assert_eq!(Lang::from_env(env(&[("LANG", "zh_CN.UTF-8")])), Lang::Zh);
        assert_eq!(Lang::from_env(env(&[("LANG", "en_US.UTF-8")])), Lang::En);
        // LC_ALL wins over LANG; YACE_LANG over both.
        assert_eq!(
            Lang::from_env(env(&[("LC_ALL", "C.UTF-8"), ("LANG", "zh_TW.UTF-8")])),
            Lang::En
        );
        assert_eq!(
            Lang::from_env(env(&[("YACE_LANG", "zh"), ("LC_ALL", "en_GB.UTF-8")])),
            Lang::Zh
        );
        assert_eq!(Lang::parse("fr"), None);
    }

    #[test]
    fn templates_fill_in_order() {
        assert_eq!(fill("{} of {}", &[&3, &"ten"]), "3 of ten");
        assert_eq!(
            trf(Lang::Zh, "{} of {} threshold(s) breached", &[&1, &4]),
            "1 个阈值未达标（共 4 个）"
        );
        assert_eq!(tr(Lang::Zh, "no such phrase"), "no such phrase");
    }

    #[test]
    fn every_template_keeps_its_placeholders() {
        // A translation must fill exactly as many figures as its English.
        for en in ALL_KEYS {
            let zh = zh(en).unwrap_or_else(|| panic!("{en:?} has no translation"));
            assert_eq!(
                en.matches("{}").count(),
                zh.matches("{}").count(),
                "{en:?} → {zh:?}"
            );
        }
    }

    #[test]
    fn known_warnings_are_translated_with_their_figures() {
        let w = "the load generator was saturated: its busiest thread was on CPU 97% of the time, so the client may have limited the rate; add threads (-t) or client machines";
        let zh = warning(Lang::Zh, w);
        assert!(zh.contains("97%") && zh.contains("饱和"), "{zh}");
        assert_eq!(warning(Lang::Zh, "something new"), "something new");
        assert_eq!(warning(Lang::En, w), w);
    }

    /// Every key of the table, for the placeholder test (kept in step with
    /// `zh` by that test: a key missing here is simply not checked, a key
    /// here without a translation fails).
    const ALL_KEYS: &[&str] = &[
        "  The measured maximum under {} is {} req/s: {}× the {} req/s required at the peak, {}× with burst headroom.",
        "  The lab's best point ({}) held {} req/s: {}× the {} req/s required at the peak, {}× with burst headroom.",
        "{}, median of {} runs",
        "  Servers like it for this load: {} (the {} req/s with burst headroom ÷ {} req/s usable each, keeping {}% in reserve); assumes the servers share the load evenly and nothing else is the bottleneck.",
        "  {} req/s supports about {} views a day of the tested page (at its share of the site) with {}% in reserve.",
        "  The server must hold {} req/s at the peak ({} req/s with burst headroom):",
        "Max rate under the SLOs: {}/s",
        ", between {} and {} (which failed)",
        "Recommended operating rate: {}–{}/s (70–80% of it).",
        "find-max {} — SLOs: {}",
        "{} ({} CPUs, {} allowed), {} thread(s), {} CPU-s, busiest thread {}%{}",
        "{} threads",
        "{} connections",
        "{} connections × {} streams",
        "closed model: {}, {}, {}",
        "open model: up to {}/s, at most {}, {}, {}",
        " · shard {}, its part: {}",
        "up to {}/s, at most {} in flight",
        "up to {} users",
        "  Requests    {} started   {} responses   {} responses/s",
        "              {} errors   {} non-2xx   {} cancelled at end   {} retried",
        "  Planned     {} = {} started + {} dropped + {} not yet due at the end",
        "  Planned     {} iterations = {} started + {} missed + {} not yet due at the end",
        "  Users       {} started, {} never answered (waited the whole run)",
        "  Transfer    in {} ({}/s)   out {}   bodies {}",
        "  Body        {} bytes first; length varied in {} responses ({}–{} bytes): information, not failure",
        "  Body        {} bytes first; length varied in 1 response ({}–{} bytes): information, not failure",
        "    min {}   mean {}   stdev {}   max {}",
        "  Phases      connect {} / {}{}   wait (to first byte) {} / {}   (mean / p99 per request)",
        "  Client      {}, {} CPU-s, busiest thread {}% busy{}",
        "              watching cost {}",
        " ({}% of the workers' CPU)",
        "  TLS {} {}, certificate {}; {} full and {} resumed handshakes",
        "  TLS: no handshake completed ({} full, {} resumed)",
        " → … ({} steps)",
        "Searching the highest rate at which {} holds — {}",
        "    {} {} · {}   {} passed, {} failed",
        "    {} {}{}   actual {}",
        "Transfer: in {} ({}/s), out {}, bodies {}; {} connections opened.",
        "Transfer: in {} ({}/s), out {}, bodies {}; {} connections opened; client {} thread(s), {} CPU-s, busiest thread {}% busy{}.",
        "<strong>{} of {} requests failed</strong> ({}%): see Errors below.",
        "<strong>{} of {} responses were not 2xx</strong> ({}%): see the status codes below.",
        "{} of {} threshold(s) breached",
        "CPU used by yace's {} worker thread(s), in cores ({} allowed){}. A client near its limit measures itself, not the server.",
        "{} has {} validity warning(s): see its own report",
        "  Responses/s {}  {}–{} over {} s{}",
        "  Checks      {} of {} failed ({}%)",
        "  (p99: every run's responses merged, with its exact 95% order-statistic interval; ≥ where too few lie beyond it for an upper bound; about {} responses a point put it within p98.5–p99.5)",
        "{} runs each",
        "{} and {} runs",
        "adjusted {}",
        "too few runs to tell: the test needs ≥ {} runs per side ({})",
        "{} higher by {}% ({}% CI {} to {}, {}, {})",
        "{} lower by {}% ({}% CI {} to {}, {}, {})",
        "no meaningful difference: {}, not clearly beyond ±{}%",
        "no significant difference in {} ({}, {})",
        "coherency-bound: throughput peaks near N = {}",
        "contention-bound: throughput levels off towards λ/σ = {}",
        "{} (λ = {} per client, σ = {} contention, κ = {} coherency, R² = {})",
        "Experiment {} — {} of {} runs done ({} repetitions, {} order, seed {})",
        "  {} skipped by a stop rule, {} failed",
        "{}: repetition {} lies far from the median (an outlier, kept)",
        "{}: repetition {} left out: {}",
        "Compared with {} (Welch's t on logs, Holm-adjusted over {} comparison; a change under {}% counts as none)",
        "Compared with {} (Welch's t on logs, Holm-adjusted over {} comparisons; a change under {}% counts as none)",
        "knee at {} = {}: beyond it throughput grows much more slowly",
        "{} departs at {} = {}: beyond it latency climbs steeply",
        "{} departs at {} = {}",
        "Scalability of {} (throughput against {}, Universal Scalability Law)",
        "left out (the client was the limit): {}",
        "problem: {}",
        "Compared with {}",
        "Welch's t on logs, Holm-adjusted over {} comparisons; a change under {}% counts as none.",
        "Welch's t on logs, Holm-adjusted over {} comparison; a change under {}% counts as none.",
        "Scalability of {}",
        "knee at {} = {}",
        "{}% within one run only: batch means {} [{}–{}] and {} [{}–{}] {}; one run a side cannot say whether it would hold again — repeat the runs",
        "{} results -- {} results: medians [95% CI] over results; Welch's t on logs, Holm-adjusted over the table; a change under {}% counts as none",
        "geometric mean of the change over {} URLs",
        "{} results against {}: medians [95% CI]; Welch's t on logs, Holm-adjusted; a change under {}% counts as none.",
        "Made by yace {} from <code>experiment.json</code> and the runs' results: <code>yace lab report DIR -F html</code> makes it again; each run's own report is linked from the table of points.",
        "{} (baseline)",
        "{} each, {} order, seed {}",
        "{} of {} done · {} skipped · {} failed",
        " · {} to go",
        "a change under {}% counts as none",
        "{} ({} points)",
        "{} of {} runs done, with problems",
        "{} of {} runs done: the experiment is not finished",
        "{} of {} runs done, the others skipped by a stop rule",
        "All {} runs done",
        "{} {}, repetition {}: failed: {}",
        "{} {}: skipped ({})",
        "knee of {}: {}",
        "{} of {} departs: {}",
        "{} — USL fit",
        "No p99: a run needs 10,000 responses for one, and these had at most {}.",
        "The experiment's page, with charts: {}",
        "repetition {}: {}",
        "repetition {}",
    ];
}
