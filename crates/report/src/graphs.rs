//! A short terminal picture under the summary (as hey and oha draw one):
//! responses per second as a sparkline over the run, and the latency
//! distribution as a compact histogram from the run's HDR histogram. Built
//! from the result alone, like every other output.

use crate::fmt::{count, duration_us};
use crate::lang::{tr, trf, Lang};
use stats::RunResult;
use std::io::{self, Write};

/// Widest sparkline, in characters (one per second, or per bucket).
const SPARK_WIDTH: usize = 60;
/// Bars of the latency histogram.
const BUCKETS: usize = 10;
const BAR_WIDTH: usize = 30;
const TICKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Writes the sparkline and the latency histogram (nothing for a run with
/// no full second or no response).
pub fn write(r: &RunResult, w: impl Write) -> io::Result<()> {
    write_in(r, w, Lang::En)
}

/// The same, in `lang`.
pub fn write_in(r: &RunResult, mut w: impl Write, lang: Lang) -> io::Result<()> {
    let rates: Vec<f64> = r
        .series
        .iter()
        .filter(|row| row.length_s >= 1.0)
        .map(|row| row.responses as f64)
        .collect();
    if rates.len() >= 2 {
        let (line, per) = sparkline(&rates);
        let (lo, hi) = rates
            .iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let bucket = if per > 1 {
            trf(lang, ", each mark the slowest of {} s", &[&per])
        } else {
            String::new()
        };
        writeln!(
            w,
            "{}",
            trf(
                lang,
                "  Responses/s {}  {}–{} over {} s{}",
                &[
                    &line,
                    &count(lo as u64),
                    &count(hi as u64),
                    &rates.len(),
                    &bucket
                ]
            )
        )?;
    }
    let Ok(h) = stats::hist::decode(&r.histograms.latency) else {
        return Ok(());
    };
    if h.is_empty() {
        return Ok(());
    }
    // From the fastest to the slowest response.
    let edges = log_edges(h.min() as f64, h.max() as f64, BUCKETS);
    let counts = bucket_counts(&h, &edges);
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let total: u64 = counts.iter().sum();
    writeln!(w, "{}", tr(lang, "  Latency histogram (log scale)"))?;
    for (i, &n) in counts.iter().enumerate() {
        let bar = ((n as f64 / most as f64) * BAR_WIDTH as f64).ceil() as usize;
        let line = format!(
            "    ≤ {:>9}  {:>6.2}%  {}",
            duration_us(edges[i + 1]),
            n as f64 * 100.0 / total.max(1) as f64,
            "■".repeat(bar)
        );
        writeln!(w, "{}", line.trim_end())?;
    }
    Ok(())
}

/// `n` log-spaced buckets from `lo` to `hi` (µs): their n + 1 edges.
pub(crate) fn log_edges(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let lo = lo.max(1.0);
    let ratio = (hi.max(1.0) / lo).max(1.0001);
    (0..=n)
        .map(|i| lo * ratio.powf(i as f64 / n as f64))
        .collect()
}

/// How many of `h`'s values fall in each bucket between `edges` (the last
/// bucket takes anything above).
pub(crate) fn bucket_counts(h: &hdrhistogram::Histogram<u64>, edges: &[f64]) -> Vec<u64> {
    let n = edges.len() - 1;
    let mut counts = vec![0u64; n];
    for v in h.iter_recorded() {
        let x = v.value_iterated_to() as f64;
        let at = edges[1..].iter().position(|&e| x <= e).unwrap_or(n - 1);
        counts[at] += v.count_at_value();
    }
    counts
}

/// Values as one line of block characters, at most [`SPARK_WIDTH`] wide:
/// longer series are cut into buckets, each drawn by its lowest value so a
/// stall stays visible. Returns the line and the seconds per mark.
fn sparkline(values: &[f64]) -> (String, usize) {
    let per = values.len().div_ceil(SPARK_WIDTH).max(1);
    let marks: Vec<f64> = values
        .chunks(per)
        .map(|c| c.iter().copied().fold(f64::MAX, f64::min))
        .collect();
    let hi = marks.iter().copied().fold(0.0, f64::max);
    let line = marks
        .iter()
        .map(|&v| {
            if hi <= 0.0 {
                TICKS[0]
            } else {
                TICKS[((v / hi) * (TICKS.len() - 1) as f64).round() as usize]
            }
        })
        .collect();
    (line, per)
}

#[cfg(test)]
mod tests {
    use super::sparkline;

    #[test]
    fn a_sparkline_scales_to_the_peak_and_keeps_a_stall_visible() {
        assert_eq!(sparkline(&[0.0, 50.0, 100.0]).0, "▁▅█");
        let mut long = vec![100.0; 600];
        long[301] = 0.0;
        let (line, per) = sparkline(&long);
        assert_eq!((line.chars().count(), per), (60, 10));
        assert_eq!(line.chars().filter(|&c| c == '▁').count(), 1, "{line}");
    }
}
