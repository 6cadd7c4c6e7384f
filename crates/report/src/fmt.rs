//! Number formatting shared by the human-readable renderers.

/// A duration given in microseconds, in the unit that keeps 3–4 digits:
/// `84µs`, `1.25ms`, `2.31s`. A fraction under 100 µs (a mean) keeps one
/// decimal, `84.6µs`, and under 1 µs reads `<1µs`: rounding must not make
/// a mean look larger than a percentile beside it.
pub fn duration_us(us: f64) -> String {
    if us > 0.0 && us < 1.0 {
        "<1µs".to_owned()
    } else if us < 100.0 && us.fract() != 0.0 {
        format!("{us:.1}µs")
    } else if us < 1000.0 {
        format!("{us:.0}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// A threshold's measured value with its unit: `36.40ms`, `0.00%`,
/// `512.3 req/s`, `3`.
pub fn actual(value: f64, unit: &str) -> String {
    match unit {
        "ms" => duration_us(value * 1000.0),
        "%" => format!("{value:.2}%"),
        "req/s" => format!("{value:.1} req/s"),
        _ if value.fract() == 0.0 && value.abs() < 1e15 => count(value as u64),
        _ => format!("{value:.3}"),
    }
}

pub use stats::fmt::count;

/// Bytes in binary units: `512 B`, `1.50 KiB`, `12.3 MiB`.
pub fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// Columns a string takes in a terminal: CJK characters take two.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `s` padded with spaces to `w` terminal columns.
pub fn pad(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(width(s))))
}

fn char_width(c: char) -> usize {
    match c as u32 {
        0x1100..=0x115F
        | 0x2E80..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6 => 2,
        _ => 1,
    }
}

/// Breaks `text` into lines of at most `width` terminal columns at spaces
/// (a longer word stays whole on its own line), and between any two
/// characters of Chinese text, which has no spaces.
pub(crate) fn wrap(text: &str, cols: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let wide = word.chars().any(|c| char_width(c) == 2);
        if !line.is_empty() && width(&line) + 1 + width(word) > cols && !wide {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        if wide {
            for c in word.chars() {
                if width(&line) + char_width(c) > cols && !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                }
                line.push(c);
            }
        } else {
            line.push_str(word);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Escapes text and attribute values for XML and HTML alike (control
/// characters, which XML 1.0 cannot carry, become spaces).
pub fn markup(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// What a run sent, for its title, as (what, where): `GET` and the URL; for
/// a scenario, `scenario` and its steps before the base URL (`POST /echo ·
/// http://…/`), since the plan's request line is not what it sent.
pub fn request_line(r: &stats::RunResult, lang: crate::lang::Lang) -> (String, String) {
    let url = &r.plan.target.url;
    if r.steps.is_empty() {
        return (r.plan.request.method.clone(), url.clone());
    }
    const SHOWN: usize = 3;
    let names: Vec<&str> = r
        .steps
        .iter()
        .take(SHOWN)
        .map(|s| s.name.as_str())
        .collect();
    let mut steps = names.join(" → ");
    if r.steps.len() > SHOWN {
        steps.push_str(&crate::lang::trf(
            lang,
            " → … ({} steps)",
            &[&r.steps.len()],
        ));
    }
    (
        crate::lang::tr(lang, "scenario").to_owned(),
        format!("{steps} · {url}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(duration_us(84.0), "84µs");
        assert_eq!(duration_us(84.6), "84.6µs");
        assert_eq!(duration_us(0.4), "<1µs");
        assert_eq!(duration_us(0.0), "0µs");
        assert_eq!(duration_us(512.4), "512µs");
        assert_eq!(duration_us(1250.0), "1.25ms");
        assert_eq!(duration_us(2_310_000.0), "2.31s");
        assert_eq!(actual(36.4, "ms"), "36.40ms");
        assert_eq!(actual(0.0, "%"), "0.00%");
        assert_eq!(actual(512.25, "req/s"), "512.2 req/s");
        assert_eq!(actual(3.0, ""), "3");
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(100), "100");
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(wrap("unbreakable-word x", 5), ["unbreakable-word", "x"]);
        // Chinese breaks between characters, two columns each.
        assert_eq!(
            wrap("客户端已饱和，无法发送", 8),
            ["客户端已", "饱和，无", "法发送"]
        );
        assert_eq!(width("延迟 p99"), 8);
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
    }
}
