//! One read of a source: named values, each a gauge (as read) or a counter
//! (cumulative; the sampler turns it into a rate per second).

/// Whether a value is used as read or as the increase since the last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
}

/// One named value.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Stable snake_case name (`active_processes`, `cpu_user_seconds`).
    pub name: String,
    /// Unit of the value as read (`count`, `bytes`, `seconds`, `%`); a
    /// counter's rate is shown per second of this unit.
    pub unit: &'static str,
    pub kind: Kind,
    pub value: f64,
}

/// Everything one read of a source returned, in a stable order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reading {
    pub fields: Vec<Field>,
}

impl Reading {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn gauge(&mut self, name: impl Into<String>, unit: &'static str, value: f64) {
        self.push(name.into(), unit, Kind::Gauge, value);
    }

    pub fn counter(&mut self, name: impl Into<String>, unit: &'static str, value: f64) {
        self.push(name.into(), unit, Kind::Counter, value);
    }

    /// A gauge that was not read this time: kept in the sample as `null`
    /// (stored as NaN, which no read value is), so that a metric is in
    /// every sample of its source, read or not.
    pub fn unread(&mut self, name: impl Into<String>, unit: &'static str) {
        self.push(name.into(), unit, Kind::Gauge, f64::NAN);
    }

    /// `value` as a gauge, or [`Reading::unread`] when `None`.
    pub fn gauge_or_unread(
        &mut self,
        name: impl Into<String>,
        unit: &'static str,
        value: Option<f64>,
    ) {
        match value {
            Some(v) => self.gauge(name, unit, v),
            None => self.unread(name, unit),
        }
    }

    fn push(&mut self, name: String, unit: &'static str, kind: Kind, value: f64) {
        self.fields.push(Field {
            name,
            unit,
            kind,
            value,
        });
    }

    /// The value named `name`, if read.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.value)
            .filter(|v| !v.is_nan())
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}
