//! `experiment.json`: the plan of an experiment (every run, in the order it
//! is done) and the status of each run, rewritten atomically after each,
//! so an interrupted experiment resumes without redoing finished runs.

use crate::experiment::{Experiment, Order, Point};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// This file's layout.
pub const SCHEMA: &str = "yace.experiment.v1";
/// Its name in the experiment's directory.
pub const FILE: &str = "experiment.json";

/// The plan and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub schema: String,
    pub name: String,
    /// The experiment file, as given, and a fingerprint of its text: resume
    /// refuses a file that changed.
    pub file: String,
    pub fingerprint: String,
    pub seed: u64,
    /// `randomized` or `sequential`.
    pub order: String,
    pub repetitions: u32,
    pub targets: Vec<String>,
    pub points: Vec<Point>,
    /// The baseline target (index) and the practical threshold.
    pub baseline: usize,
    pub practical: f64,
    /// The swept values the baseline fixes (`baseline = "children=5"`).
    #[serde(default)]
    pub baseline_point: Point,
    /// Whether the baseline fixes the target (false: each target against
    /// its own baseline level).
    #[serde(default = "yes")]
    pub baseline_by_target: bool,
    /// `runs` (each a fixed load; its figure is throughput) or `find-max`
    /// (each a search; its figure is the highest rate under the SLOs).
    #[serde(default = "runs_kind")]
    pub kind: String,
    /// In the order they are done.
    pub runs: Vec<Run>,
}

/// One run of one target at one point, in one block (repetition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub id: usize,
    pub block: u32,
    pub target: usize,
    pub point: usize,
    pub status: Status,
    /// Its result file, relative to the directory.
    pub result: Option<String>,
    pub started_at: Option<String>,
    /// Why it failed or was skipped.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Done,
    Failed,
    Skipped,
}

fn yes() -> bool {
    true
}

fn runs_kind() -> String {
    "runs".into()
}

/// FNV-1a, 64 bits, in hex: enough to notice an edited file.
pub fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl State {
    /// What the others are compared with, as the reports name it: the
    /// target (`nginx`), the level (`children=5`) or both.
    pub fn baseline_name(&self) -> String {
        let level = crate::experiment::point_label(&self.baseline_point);
        match (self.baseline_by_target, self.baseline_point.is_empty()) {
            (true, true) => self.targets[self.baseline].clone(),
            (false, _) => level,
            (true, false) => format!("{} {level}", self.targets[self.baseline]),
        }
    }

    /// The (target, point) a cell is compared with, `None` for a cell of
    /// the baseline itself or when its counterpart is not in the plan.
    pub fn counterpart(&self, target: usize, point: usize) -> Option<(usize, usize)> {
        let t = if self.baseline_by_target {
            self.baseline
        } else {
            target
        };
        let mut want = self.points.get(point)?.clone();
        for (k, v) in &self.baseline_point {
            if let Some(slot) = want.iter_mut().find(|(key, _)| key == k) {
                slot.1 = v.clone();
            }
        }
        let p = self.points.iter().position(|q| *q == want)?;
        ((t, p) != (target, point)).then_some((t, p))
    }

    /// Every run of `e`: block by block, each block visiting every (target,
    /// point) once — shuffled by a seeded generator when the order is
    /// randomized, so the same seed gives the same order.
    pub fn plan(e: &Experiment, text: &str) -> State {
        let points = e.points();
        let mut runs = Vec::new();
        for block in 0..e.repetitions {
            let mut pairs: Vec<(usize, usize)> = (0..e.targets.len())
                .flat_map(|t| (0..points.len()).map(move |p| (t, p)))
                .collect();
            if e.order == Order::Randomized {
                let mut rng = crate::stats::Rng::new(
                    e.seed ^ (u64::from(block) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
                crate::stats::shuffle(&mut pairs, &mut rng);
            }
            for (target, point) in pairs {
                runs.push(Run {
                    id: runs.len(),
                    block,
                    target,
                    point,
                    status: Status::Pending,
                    result: None,
                    started_at: None,
                    note: None,
                });
            }
        }
        State {
            schema: SCHEMA.into(),
            name: e.name.clone(),
            file: e.file.clone(),
            fingerprint: fingerprint(text),
            seed: e.seed,
            order: match e.order {
                Order::Randomized => "randomized",
                Order::Sequential => "sequential",
            }
            .into(),
            repetitions: e.repetitions,
            targets: e.targets.iter().map(|t| t.name.clone()).collect(),
            points,
            baseline: e.baseline,
            baseline_point: e.baseline_point.clone(),
            baseline_by_target: e.baseline_by_target,
            practical: e.practical,
            kind: if e.find_max.is_some() {
                "find-max"
            } else {
                "runs"
            }
            .into(),
            runs,
        }
    }

    /// Where run `r`'s result goes, relative to the directory:
    /// `runs/TARGET/POINT/rep-N.json`.
    pub fn result_path(&self, r: &Run) -> String {
        let point = slug(&crate::experiment::point_label(&self.points[r.point]));
        format!(
            "runs/{}/{}/rep-{}.json",
            slug(&self.targets[r.target]),
            point,
            r.block + 1
        )
    }

    /// After a run at `failed` broke a stop rule: the target's pending runs
    /// further along the first swept parameter (same other values) are
    /// skipped. Returns how many.
    pub fn skip_beyond(&mut self, target: usize, failed: usize, why: &str) -> usize {
        let base = &self.points[failed];
        let Some((key, value)) = base.first() else {
            return 0;
        };
        let order = |v: &str| v.parse::<f64>().ok();
        let beyond: Vec<usize> = self
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.len() == base.len()
                    && p[1..] == base[1..]
                    && p[0].0 == *key
                    && match (order(&p[0].1), order(value)) {
                        (Some(a), Some(b)) => a > b,
                        _ => false,
                    }
            })
            .map(|(i, _)| i)
            .collect();
        let mut n = 0;
        for r in &mut self.runs {
            if r.target == target && r.status == Status::Pending && beyond.contains(&r.point) {
                r.status = Status::Skipped;
                r.note = Some(why.to_string());
                n += 1;
            }
        }
        n
    }

    /// Writes `experiment.json` in `dir` atomically (a temporary file, then
    /// a rename).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let path = dir.join(FILE);
        let tmp = dir.join(format!(".{FILE}.tmp"));
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer_pretty(&mut f, self)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    }

    pub fn load(dir: &Path) -> Result<State, String> {
        let path: PathBuf = dir.join(FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}: {e} (is this an experiment's directory?)",
                path.display()
            )
        })?;
        let s: State = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not an experiment file: {e}", path.display()))?;
        if s.schema != SCHEMA {
            return Err(format!(
                "{}: schema {} is not {SCHEMA}",
                path.display(),
                s.schema
            ));
        }
        Ok(s)
    }

    pub fn count(&self, status: Status) -> usize {
        self.runs.iter().filter(|r| r.status == status).count()
    }
}

/// A file-name-safe form: letters, digits, `.`, `-`, `_`, `=`; others `_`.
pub fn slug(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        "_".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::parse;
    use scenario::doc::Format;

    fn exp(text: &str) -> Experiment {
        parse(text, Format::Toml, "e.toml", &|_| Ok(())).unwrap()
    }

    const TEXT: &str = r#"
seed = 11
repetitions = 6
[[target]]
name = "a"
url = "http://127.0.0.1:1/"
[[target]]
name = "b"
url = "http://127.0.0.1:2/"
[sweep]
connections = [1, 2, 4, 8]
"#;

    #[test]
    fn randomized_blocks_visit_everything_once_and_repeat_by_seed() {
        let e = exp(TEXT);
        let s = State::plan(&e, TEXT);
        assert_eq!(s.runs.len(), 2 * 4 * 6);
        for block in 0..6 {
            let mut seen: Vec<(usize, usize)> = s
                .runs
                .iter()
                .filter(|r| r.block == block)
                .map(|r| (r.target, r.point))
                .collect();
            seen.sort_unstable();
            let all: Vec<(usize, usize)> =
                (0..2).flat_map(|t| (0..4).map(move |p| (t, p))).collect();
            assert_eq!(seen, all, "block {block}");
        }
        // Reproducible from the seed; another seed, another order.
        assert_eq!(State::plan(&e, TEXT), s);
        let other = State::plan(&exp(&TEXT.replace("seed = 11", "seed = 12")), TEXT);
        let order = |s: &State| {
            s.runs
                .iter()
                .map(|r| (r.target, r.point))
                .collect::<Vec<_>>()
        };
        assert_ne!(order(&other), order(&s));
        // Not the file's order (an ascending sweep confounds level and time).
        let sequential: Vec<(usize, usize)> =
            (0..2).flat_map(|t| (0..4).map(move |p| (t, p))).collect();
        assert_ne!(&order(&s)[..8], &sequential[..]);
    }

    #[test]
    fn a_failing_level_skips_the_higher_ones_of_that_target() {
        let e = exp(TEXT);
        let mut s = State::plan(&e, TEXT);
        let n = s.skip_beyond(1, 1, "errors 30% at connections=2");
        // Points 2 and 4 (connections 4 and 8) of target b, in 6 blocks.
        assert_eq!(n, 12);
        assert!(s
            .runs
            .iter()
            .filter(|r| r.status == Status::Skipped)
            .all(|r| r.target == 1 && r.point >= 2));
        assert_eq!(s.result_path(&s.runs[0]).matches('/').count(), 3);
    }

    #[test]
    fn saved_and_loaded() {
        let e = exp(TEXT);
        let s = State::plan(&e, TEXT);
        let dir = std::env::temp_dir().join(format!("yace-lab-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        s.save(&dir).unwrap();
        assert_eq!(State::load(&dir).unwrap(), s);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
