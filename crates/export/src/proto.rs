//! Just enough protobuf to write OTLP's `ExportMetricsServiceRequest`
//! (opentelemetry-proto, `collector/metrics/v1`): varints, lengths and
//! fixed-width fields, written by hand rather than generated — a handful
//! of messages, checked against the official decoder in the tests.

/// A message being written.
#[derive(Debug, Default, Clone)]
pub struct Msg(pub Vec<u8>);

impl Msg {
    fn key(&mut self, field: u32, wire: u8) {
        self.varint(((field as u64) << 3) | wire as u64);
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    pub fn string(&mut self, field: u32, s: &str) -> &mut Self {
        self.bytes(field, s.as_bytes())
    }

    pub fn bytes(&mut self, field: u32, b: &[u8]) -> &mut Self {
        self.key(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }

    pub fn msg(&mut self, field: u32, m: &Msg) -> &mut Self {
        self.bytes(field, &m.0)
    }

    pub fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        self.key(field, 0);
        self.varint(v);
        self
    }

    pub fn boolean(&mut self, field: u32, v: bool) -> &mut Self {
        self.uint(field, u64::from(v))
    }

    pub fn fixed64(&mut self, field: u32, v: u64) -> &mut Self {
        self.key(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn double(&mut self, field: u32, v: f64) -> &mut Self {
        self.fixed64(field, v.to_bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_are_protobufs() {
        let mut m = Msg::default();
        m.uint(1, 300);
        assert_eq!(m.0, [0x08, 0xac, 0x02]);
        let mut m = Msg::default();
        m.string(2, "hi");
        assert_eq!(m.0, [0x12, 2, b'h', b'i']);
        let mut m = Msg::default();
        m.double(4, 1.0);
        assert_eq!(m.0[0], 0x21);
        assert_eq!(&m.0[1..], &1.0f64.to_le_bytes());
    }
}
