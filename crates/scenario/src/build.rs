//! From the positioned tree to a runnable [`Program`]: every key checked,
//! every template resolved, every file read, and every problem reported with
//! its place. Request steps are in `step.rs`.

use crate::data::{parse_csv, DataMode, Dataset};
use crate::diag::{did_you_mean, Pos, Sink};
use crate::ident::is_ident;
use crate::load::{self, LoadSpec};
use crate::node::{Kind, Node};
use crate::program::{Journey, Program, Slot, Step};
use crate::read::{self, Fields};
use crate::template::{self, Enc, Name, Part, RawPart, Source, Template};
use crate::StepInfo;
use plan::{Target, Think};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

const TOP: [&str; 7] = ["base", "load", "headers", "vars", "data", "journey", "step"];
const BUILTINS: [&str; 4] = ["user", "iteration", "uuid", "random(a, b)"];
/// Files a scenario may read: data sets and bodies.
const MAX_FILE_BYTES: u64 = 64 << 20;

pub(crate) struct Built {
    pub prog: Program,
    pub base: crate::Base,
    pub load: LoadSpec,
    pub steps: Vec<StepInfo>,
}

/// What a template may name at one point of a journey.
#[derive(Debug, Default, Clone)]
pub(crate) struct Known {
    /// Extracted by an earlier step: name → slot.
    pub extracted: BTreeMap<String, usize>,
    /// Extracted by a later step of the journey: name → that step.
    pub later: BTreeMap<String, String>,
}

pub(crate) struct Builder<'a> {
    pub s: &'a mut Sink,
    pub dir: &'a Path,
    pub base: Option<Target>,
    pub load: Option<LoadSpec>,
    pub vars: Vec<(String, String)>,
    pub data: Vec<Dataset>,
    /// Data sets whose file could not be read: any column is accepted.
    pub broken: BTreeSet<usize>,
    /// Top-level `headers`, added to every step.
    pub headers: Vec<(&'a str, Pos, &'a Node)>,
    pub steps: Vec<Step>,
    pub infos: Vec<StepInfo>,
    pub slots: Vec<String>,
    pub counters: Vec<(u16, String)>,
}

pub(crate) fn build(
    root: &Node,
    origin: &str,
    dir: &Path,
    env: &BTreeMap<String, String>,
    given: Option<&str>,
    s: &mut Sink,
) -> Option<Built> {
    if root.kind == Kind::Null {
        s.hint(
            root.pos,
            "the scenario is empty",
            "it needs at least a journey (or a step)",
        );
        return None;
    }
    let f = read::table(s, root, "the scenario", &TOP)?;
    let mut b = Builder {
        s,
        dir,
        base: None,
        load: None,
        vars: Vec::new(),
        data: Vec::new(),
        broken: BTreeSet::new(),
        headers: Vec::new(),
        steps: Vec::new(),
        infos: Vec::new(),
        slots: Vec::new(),
        counters: Vec::new(),
    };
    // The file's base is read (and checked) even when one is given.
    let file_base = b.base(&f);
    let origin_of_base = match (given, f.get("base")) {
        (Some(url), _) => match Target::parse(url) {
            Ok(t) => {
                b.base = Some(t);
                crate::Base::Given
            }
            Err(e) => {
                b.s.err(Pos::default(), format!("the given base: {e}"));
                crate::Base::Given
            }
        },
        (None, Some(_)) => {
            b.base = file_base;
            crate::Base::File
        }
        (None, None) => crate::Base::Missing,
    };
    b.load = load::resolve(b.s, f.get("load"), env);
    if let Some(n) = f.get("data") {
        b.datasets(n);
    }
    if let Some(n) = f.get("vars") {
        b.vars(n);
    }
    if let Some(n) = f.get("headers") {
        b.global_headers(n);
    }
    let journeys = b.journeys(&f, root.pos);
    if !b.s.is_empty() {
        return None;
    }
    let load = b.load?;
    let base = match origin_of_base {
        // Validated without a target: the path prefix is empty, and
        // nothing runs until a base is given.
        crate::Base::Missing => Target::parse("http://127.0.0.1/").expect("a valid stand-in"),
        _ => b.base?,
    };
    let json = json!({
        "file": origin,
        "base": (origin_of_base != crate::Base::Missing).then(|| base.url.clone()),
        "base_from": match origin_of_base {
            crate::Base::File => "file",
            crate::Base::Given => "given (replaces the file's base)",
            crate::Base::Missing => "missing (the run's URL or the embedded target)",
        },
        "load": load.to_json(),
        "vars": b.vars.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect::<serde_json::Map<_, _>>(),
        "data": b.data.iter().map(|d| json!({
            "name": d.name, "file": d.file, "mode": d.mode.name(),
            "columns": d.columns, "rows": d.rows.len(),
        })).collect::<Vec<_>>(),
        "journeys": journeys.iter().map(|(_, j)| j.clone()).collect::<Vec<_>>(),
        "thresholds": load.thresholds,
    });
    Some(Built {
        prog: Program {
            base,
            data: b.data,
            journeys: journeys.into_iter().map(|(j, _)| j).collect(),
            steps: b.steps,
            slots: b.slots,
            counters: b.counters,
            cookies: load.cookies,
            seed: load.seed,
            json,
        },
        load,
        base: origin_of_base,
        steps: b.infos,
    })
}

impl<'a> Builder<'a> {
    fn base(&mut self, f: &Fields<'_>) -> Option<Target> {
        let n = f.get("base")?;
        let text = read::string(self.s, n, "`base`")?;
        match Target::parse(text) {
            Ok(t) if t.path.contains('?') => {
                self.s.hint(
                    n.pos,
                    "`base` has a query",
                    "put the query in each step's url",
                );
                None
            }
            Ok(t) => Some(t),
            Err(e) => {
                self.s.hint(
                    n.pos,
                    format!("`base`: {e}"),
                    "write the target as \"http://host:port\"",
                );
                None
            }
        }
    }

    pub(crate) fn default_think(&self) -> Think {
        self.load.as_ref().map(|l| l.think).unwrap_or_default()
    }

    pub(crate) fn cookies(&self) -> bool {
        self.load.as_ref().is_none_or(|l| l.cookies)
    }

    fn datasets(&mut self, n: &Node) {
        let Some(items) = read::list(self.s, n, "`data`") else {
            return;
        };
        for item in items {
            let what = "a data set";
            let Some(f) = read::table(
                self.s,
                item,
                what,
                &["name", "file", "mode", "allow_outside"],
            ) else {
                continue;
            };
            let name = f.require(self.s, "name", what).and_then(|n| {
                let t = read::string(self.s, n, "`name`")?;
                if !is_ident(t) {
                    self.s.hint(
                        n.pos,
                        format!("data set name '{t}' is not a plain name"),
                        "letters, digits, '_' and '-'; templates use it as {{name.column}}",
                    );
                    return None;
                }
                if self.data.iter().any(|d| d.name == t) {
                    self.s
                        .err(n.pos, format!("data set '{t}' is declared twice"));
                }
                Some(t.to_owned())
            });
            let mode = match f.get("mode") {
                None => Some(DataMode::PerUser),
                Some(m) => read::string(self.s, m, "`mode`").and_then(|t| {
                    let mode = DataMode::parse(t);
                    if mode.is_none() {
                        self.s.hint(
                            m.pos,
                            format!("unknown data mode '{t}'"),
                            "per_user, round_robin or random",
                        );
                    }
                    mode
                }),
            };
            let outside = f
                .get("allow_outside")
                .and_then(|n| read::boolean(self.s, n, "`allow_outside`"))
                .unwrap_or(false);
            let file_node = f.require(self.s, "file", what);
            let mut set = Dataset {
                name: name.clone().unwrap_or_default(),
                file: String::new(),
                mode: mode.unwrap_or(DataMode::PerUser),
                columns: Vec::new(),
                rows: Vec::new(),
            };
            let mut ok = false;
            if let Some(fnode) = file_node {
                if let Some(rel) = read::string(self.s, fnode, "`file`") {
                    set.file = rel.to_owned();
                    if let Some(bytes) = self.read_file(fnode, rel, outside) {
                        ok = self.csv(&mut set, rel, bytes);
                    }
                }
            }
            if name.is_some() {
                if !ok {
                    self.broken.insert(self.data.len());
                }
                self.data.push(set);
            }
        }
    }

    fn csv(&mut self, set: &mut Dataset, rel: &str, bytes: Vec<u8>) -> bool {
        let file = self.dir.join(rel).display().to_string();
        let Ok(text) = String::from_utf8(bytes) else {
            self.s.push_in(
                &file,
                Pos::new(1, 1),
                "the file is not UTF-8 text".into(),
                None,
            );
            return false;
        };
        match parse_csv(&text) {
            Ok(csv) => {
                set.columns = csv.columns;
                set.rows = csv.rows;
                true
            }
            Err(errors) => {
                for (line, msg) in errors {
                    self.s.push_in(&file, Pos::new(line, 1), msg, None);
                }
                false
            }
        }
    }

    /// Reads a file named in the scenario, relative to its folder. Without
    /// `allow_outside` the path must stay inside that folder: no absolute
    /// paths, no `..`, and no symbolic link leading out.
    pub(crate) fn read_file(&mut self, node: &Node, rel: &str, outside: bool) -> Option<Vec<u8>> {
        let path = Path::new(rel);
        let hint = "set allow_outside = true on this item to allow it";
        if !outside {
            if path.is_absolute() {
                self.s.hint(
                    node.pos,
                    format!(
                        "'{rel}' is an absolute path; files are read from the scenario's folder"
                    ),
                    hint,
                );
                return None;
            }
            if path.components().any(|c| c == Component::ParentDir) {
                self.s.hint(
                    node.pos,
                    format!("'{rel}' leaves the scenario's folder (through '..')"),
                    hint,
                );
                return None;
            }
        }
        let full: PathBuf = self.dir.join(path);
        let real = match full.canonicalize() {
            Ok(p) => p,
            Err(e) => {
                self.s
                    .err(node.pos, format!("cannot read '{}': {e}", full.display()));
                return None;
            }
        };
        if !outside {
            let dir = self
                .dir
                .canonicalize()
                .unwrap_or_else(|_| self.dir.to_path_buf());
            if !real.starts_with(&dir) {
                self.s.hint(
                    node.pos,
                    format!(
                        "'{rel}' leads outside the scenario's folder (through a symbolic link)"
                    ),
                    hint,
                );
                return None;
            }
        }
        match std::fs::metadata(&real) {
            Ok(m) if m.is_dir() => {
                self.s
                    .err(node.pos, format!("'{rel}' is a folder, not a file"));
                return None;
            }
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                self.s.err(
                    node.pos,
                    format!("'{rel}' is {} bytes; files are limited to 64 MiB", m.len()),
                );
                return None;
            }
            _ => {}
        }
        match std::fs::read(&real) {
            Ok(b) => Some(b),
            Err(e) => {
                self.s
                    .err(node.pos, format!("cannot read '{}': {e}", full.display()));
                None
            }
        }
    }

    fn vars(&mut self, n: &Node) {
        let Some(entries) = read::any_table(self.s, n, "[vars]") else {
            return;
        };
        for e in entries {
            if !is_ident(&e.key) {
                self.s.hint(
                    e.key_pos,
                    format!("variable name '{}' is not a plain name", e.key),
                    "letters, digits, '_' and '-' (a dot would read as dataset.column)",
                );
                continue;
            }
            let Some(v) = read::scalar_text(self.s, &e.value, &format!("[vars] `{}`", e.key))
            else {
                continue;
            };
            if v.contains("{{") {
                self.s.hint(
                    e.value.pos,
                    format!("[vars] `{}` holds a template", e.key),
                    "vars are constants; put the template where the value is used",
                );
                continue;
            }
            self.vars.push((e.key.clone(), v));
        }
    }

    fn global_headers(&mut self, n: &'a Node) {
        if let Some(entries) = read::any_table(self.s, n, "`headers`") {
            for e in entries {
                self.headers.push((&e.key, e.key_pos, &e.value));
            }
        }
    }

    fn journeys(&mut self, f: &Fields<'a>, root: Pos) -> Vec<(Journey, Value)> {
        let mut out = Vec::new();
        match (f.get("journey"), f.get("step")) {
            (Some(_), Some(_)) => {
                let pos = f.key_pos("step").unwrap_or(root);
                self.s.hint(
                    pos,
                    "top-level `step` is shorthand for one journey; this file also has `journey`",
                    "move these steps into a [[journey]]",
                );
            }
            (None, None) => self.s.hint(
                root,
                "the scenario has no journey",
                "add [[journey]] with [[journey.step]] tables, or [[step]] tables for one journey",
            ),
            (None, Some(steps)) => {
                if let Some(j) = self.journey_steps("main", 1.0, steps, steps.pos) {
                    out.push(j);
                }
            }
            (Some(js), None) => {
                let Some(items) = read::list(self.s, js, "`journey`") else {
                    return out;
                };
                let mut names = BTreeSet::new();
                for (i, item) in items.iter().enumerate() {
                    let what = "a journey";
                    let Some(jf) = read::table(self.s, item, what, &["name", "weight", "step"])
                    else {
                        continue;
                    };
                    let name = match jf.get("name") {
                        Some(n) => match read::string(self.s, n, "`name`") {
                            Some(t) => t.to_owned(),
                            None => continue,
                        },
                        None => format!("journey{}", i + 1),
                    };
                    if !names.insert(name.clone()) {
                        let pos = jf.get("name").map_or(item.pos, |n| n.pos);
                        self.s
                            .err(pos, format!("journey name '{name}' is used twice"));
                    }
                    let weight = jf
                        .get("weight")
                        .map_or(Some(1.0), |w| read::positive(self.s, w, "`weight`"));
                    let Some(steps) = jf.get("step") else {
                        self.s.hint(
                            item.pos,
                            format!("journey '{name}' has no steps"),
                            "add [[journey.step]] tables after it",
                        );
                        continue;
                    };
                    if let Some(j) =
                        self.journey_steps(&name, weight.unwrap_or(1.0), steps, item.pos)
                    {
                        out.push(j);
                    }
                }
            }
        }
        out
    }

    fn journey_steps(
        &mut self,
        name: &str,
        weight: f64,
        steps: &Node,
        at: Pos,
    ) -> Option<(Journey, Value)> {
        let items = read::list(self.s, steps, "`step`")?;
        if items.is_empty() {
            self.s.err(at, format!("journey '{name}' has no steps"));
            return None;
        }
        let mut known = Known::default();
        // Variables extracted anywhere in the journey, for "comes later" hints.
        let mut later_all = Vec::new();
        for item in items {
            let mut names = Vec::new();
            collect_extracts(item, &mut names);
            later_all.push(names);
        }
        let mut slots = Vec::new();
        let mut step_json = Vec::new();
        let mut names: BTreeMap<String, Pos> = BTreeMap::new();
        for (i, item) in items.iter().enumerate() {
            known.later.clear();
            for later in &later_all[i..] {
                for (var, step) in later {
                    known
                        .later
                        .entry(var.clone())
                        .or_insert_with(|| step.clone());
                }
            }
            let is_choice =
                matches!(&item.kind, Kind::Map(es) if es.iter().any(|e| e.key == "choice"));
            let r = if is_choice {
                self.choice(name, item, &mut known, &mut names, i)
            } else {
                self.step(name, None, item, &known, &mut names)
                    .map(|(id, js, extracted)| {
                        self.learn(&mut known, extracted);
                        (Slot::Step(id), js)
                    })
            };
            if let Some((slot, js)) = r {
                slots.push(slot);
                step_json.push(js);
            }
        }
        let json = json!({"name": name, "weight": weight, "steps": step_json});
        Some((Journey { weight, slots }, json))
    }

    /// Makes this step's extracted variables known to later steps.
    pub(crate) fn learn(&mut self, known: &mut Known, extracted: Vec<String>) {
        for var in extracted {
            let slot = match self.slots.iter().position(|s| *s == var) {
                Some(i) => i,
                None => {
                    self.slots.push(var.clone());
                    self.slots.len() - 1
                }
            };
            known.extracted.insert(var, slot);
        }
    }

    fn choice(
        &mut self,
        journey: &str,
        item: &Node,
        known: &mut Known,
        names: &mut BTreeMap<String, Pos>,
        index: usize,
    ) -> Option<(Slot, Value)> {
        let what = "a choice";
        let f = read::table(self.s, item, what, &["name", "choice"])?;
        let group = match f.get("name") {
            Some(n) => read::string(self.s, n, "`name`")?.to_owned(),
            None => format!("choice{}", index + 1),
        };
        let options = read::list(self.s, f.get("choice")?, "`choice`")?;
        if options.is_empty() {
            self.s
                .err(item.pos, format!("choice '{group}' has no options"));
            return None;
        }
        let mut out = Vec::new();
        let mut js = Vec::new();
        let mut learned = Vec::new();
        for opt in options {
            let weight = match &opt.kind {
                Kind::Map(es) => match es.iter().find(|e| e.key == "weight") {
                    Some(e) => read::positive(self.s, &e.value, "`weight`"),
                    None => Some(1.0),
                },
                _ => Some(1.0),
            };
            if let Some((id, j, extracted)) = self.step(journey, Some(&group), opt, known, names) {
                learned.extend(extracted);
                if let Some(w) = weight {
                    out.push((id, w));
                    js.push(j);
                }
            }
        }
        self.learn(known, learned);
        (out.len() == options.len())
            .then(|| (Slot::Choice(out), json!({"choice": group, "options": js})))
    }

    /// Compiles a template; unknown names are reported where they are.
    pub(crate) fn template(
        &mut self,
        node: &Node,
        what: &str,
        enc: Enc,
        known: &Known,
    ) -> Option<Template> {
        let text = read::scalar_text(self.s, node, what)?;
        let parts = self.parts(node, &text, 0, what, enc, known)?;
        Some(Template::new(&text, enc, parts))
    }

    /// The resolved parts of `text`, which starts `shift` bytes into the
    /// string of `node`; literals are encoded with `enc`.
    pub(crate) fn parts(
        &mut self,
        node: &Node,
        text: &str,
        shift: usize,
        what: &str,
        enc: Enc,
        known: &Known,
    ) -> Option<Vec<Part>> {
        let raw = match template::parse(text) {
            Ok(r) => r,
            Err((offset, msg)) => {
                self.s
                    .err(node.pos_in(shift + offset), format!("{what}: {msg}"));
                return None;
            }
        };
        let mut parts = Vec::new();
        let mut ok = true;
        for p in raw {
            match p {
                RawPart::Lit(l) => {
                    let mut b = Vec::new();
                    template::encode(enc, l.as_bytes(), &mut b);
                    parts.push(Part::Lit(b));
                }
                RawPart::Ref { name, offset } => {
                    match self.resolve(&name, node.pos_in(shift + offset), what, known) {
                        Some(p) => parts.push(p),
                        None => ok = false,
                    }
                }
            }
        }
        ok.then_some(parts)
    }

    fn resolve(&mut self, name: &Name, pos: Pos, what: &str, known: &Known) -> Option<Part> {
        let n = match name {
            Name::Random(a, b) => {
                return Some(Part::Value {
                    slot: None,
                    fallback: Source::Random(*a, *b),
                })
            }
            Name::Uuid => {
                return Some(Part::Value {
                    slot: None,
                    fallback: Source::Uuid,
                })
            }
            Name::Plain(n) => n,
        };
        if let Some((set, column)) = n.split_once('.') {
            let Some(i) = self.data.iter().position(|d| d.name == set) else {
                let names: Vec<&str> = self.data.iter().map(|d| d.name.as_str()).collect();
                let hint = match did_you_mean(set, &names) {
                    Some(m) => format!("did you mean `{m}`?"),
                    None => "declare it with [[data]]".to_owned(),
                };
                self.s
                    .hint(pos, format!("{what}: unknown data set `{set}`"), hint);
                return None;
            };
            if self.broken.contains(&i) {
                return Some(Part::Value {
                    slot: None,
                    fallback: Source::Empty,
                });
            }
            let columns: Vec<&str> = self.data[i].columns.iter().map(String::as_str).collect();
            let Some(c) = columns.iter().position(|c| *c == column) else {
                let hint = match did_you_mean(column, &columns) {
                    Some(m) => format!("did you mean `{m}`?"),
                    None => format!("its columns are {}", columns.join(", ")),
                };
                self.s.hint(
                    pos,
                    format!("{what}: data set `{set}` has no column `{column}`"),
                    hint,
                );
                return None;
            };
            return Some(Part::Value {
                slot: None,
                fallback: Source::Data { set: i, column: c },
            });
        }
        let slot = known.extracted.get(n).copied();
        let fallback = if let Some((_, v)) = self.vars.iter().find(|(k, _)| k == n) {
            Source::Text(v.clone())
        } else {
            match n.as_str() {
                "user" => Source::User,
                "iteration" => Source::Iteration,
                _ => Source::Empty,
            }
        };
        if slot.is_none() && fallback == Source::Empty {
            let hint = if let Some(step) = known.later.get(n) {
                format!("`{n}` is extracted by step '{step}', which runs after this one")
            } else {
                let mut all: Vec<&str> = known.extracted.keys().map(String::as_str).collect();
                all.extend(self.vars.iter().map(|(k, _)| k.as_str()));
                all.extend(BUILTINS);
                match did_you_mean(n, &all) {
                    Some(m) => format!("did you mean `{m}`?"),
                    None => "extract it in an earlier step, define it in [vars], \
                             or read a data set as {{set.column}}"
                        .to_owned(),
                }
            };
            self.s
                .hint(pos, format!("{what}: unknown variable `{n}`"), hint);
            return None;
        }
        Some(Part::Value { slot, fallback })
    }
}

/// (variable, step name) for each extract in a step or choice, read loosely
/// (problems are reported when the step itself is built).
fn collect_extracts(item: &Node, out: &mut Vec<(String, String)>) {
    let Kind::Map(es) = &item.kind else { return };
    let get = |k: &str| es.iter().find(|e| e.key == k).map(|e| &e.value);
    if let Some(Node {
        kind: Kind::Seq(options),
        ..
    }) = get("choice")
    {
        for o in options {
            collect_extracts(o, out);
        }
        return;
    }
    let name = match get("name").map(|n| &n.kind) {
        Some(Kind::Str(t)) => t.text.clone(),
        _ => match get("url").map(|n| &n.kind) {
            Some(Kind::Str(t)) => t.text.clone(),
            _ => "?".to_owned(),
        },
    };
    if let Some(Node {
        kind: Kind::Seq(list),
        ..
    }) = get("extract")
    {
        for e in list {
            if let Kind::Map(fields) = &e.kind {
                if let Some(Kind::Str(t)) = fields
                    .iter()
                    .find(|f| f.key == "var")
                    .map(|f| &f.value.kind)
                {
                    out.push((t.text.clone(), name.clone()));
                }
            }
        }
    }
}
