//! Byte vectors written from the FastCGI 1.0 specification (§3 records,
//! §3.4 name-value pairs, §5 the responder's records), and hostile ones.

use super::*;

/// A record as the specification lays it out, padded with `pad` zeros.
fn record(kind: u8, id: u16, content: &[u8], pad: u8) -> Vec<u8> {
    let mut v = vec![
        1,
        kind,
        (id >> 8) as u8,
        id as u8,
        (content.len() >> 8) as u8,
        content.len() as u8,
        pad,
        0,
    ];
    v.extend_from_slice(content);
    v.extend(std::iter::repeat_n(0, pad as usize));
    v
}

fn end_request(id: u16, app: u32, protocol: u8) -> Vec<u8> {
    let a = app.to_be_bytes();
    record(3, id, &[a[0], a[1], a[2], a[3], protocol, 0, 0, 0], 0)
}

/// What a parser made of a whole exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    status: u16,
    body: Vec<u8>,
    body_len: u64,
    stderr: Vec<u8>,
    stderr_len: u64,
    end: Option<EndRequest>,
    /// Offset of the response's end in the whole input, or the error, or
    /// the end-of-file result.
    outcome: Result<usize, String>,
}

/// Feeds `wire` in reads of `size` bytes (0: one read).
fn feed(wire: &[u8], size: usize, limits: Limits) -> Seen {
    let mut p = ResponseParser::new(1, limits);
    let mut pos = 0;
    let size = if size == 0 { wire.len().max(1) } else { size };
    let outcome = loop {
        if pos >= wire.len() {
            break match p.eof() {
                Ok(()) => Ok(pos),
                Err(e) => Err(format!("eof: {e:?}")),
            };
        }
        let end = (pos + size).min(wire.len());
        match p.feed(&wire[pos..end]) {
            Ok(Progress::NeedMore) => pos = end,
            Ok(Progress::Done { consumed }) => {
                assert!(consumed <= end - pos);
                break Ok(pos + consumed);
            }
            Err(e) => break Err(e.to_string()),
        }
    };
    Seen {
        status: p.status,
        body: p.body().to_vec(),
        body_len: p.body_len,
        stderr: p.stderr().to_vec(),
        stderr_len: p.stderr_len,
        end: p.end,
        outcome,
    }
}

fn keep_all() -> Limits {
    Limits {
        keep_body: 1 << 20,
        ..Limits::default()
    }
}

/// The same outcome in one read, a byte at a time, and cut in two at every byte.
fn same_every_split(wire: &[u8], limits: Limits) -> Seen {
    let whole = feed(wire, 0, limits);
    assert_eq!(feed(wire, 1, limits), whole, "a byte at a time");
    for cut in 1..wire.len() {
        let mut p = ResponseParser::new(1, limits);
        let mut at = 0;
        let mut outcome = None;
        for piece in [&wire[..cut], &wire[cut..]] {
            match p.feed(piece) {
                Ok(Progress::NeedMore) => at += piece.len(),
                Ok(Progress::Done { consumed }) => {
                    outcome = Some(Ok(at + consumed));
                    break;
                }
                Err(e) => {
                    outcome = Some(Err(e.to_string()));
                    break;
                }
            }
        }
        let outcome = outcome.unwrap_or_else(|| match p.eof() {
            Ok(()) => Ok(at),
            Err(e) => Err(format!("eof: {e:?}")),
        });
        assert_eq!(outcome, whole.outcome, "cut at {cut}");
        assert_eq!((p.status, p.body_len), (whole.status, whole.body_len));
    }
    whole
}

/// php-fpm 8.2's answer to a script it cannot find: a CGI head with
/// `Status: 404`, the body, "Primary script unknown" on stderr.
fn not_found() -> Vec<u8> {
    let out =
        b"Status: 404 Not Found\r\nContent-type: text/html; charset=UTF-8\r\n\r\nFile not found.\n";
    let mut w = record(7, 1, b"Primary script unknown", 2);
    w.extend(record(6, 1, out, (8 - out.len() % 8) as u8 % 8));
    w.extend(record(6, 1, b"", 0));
    w.extend(end_request(1, 0, 0));
    w
}

#[test]
fn a_request_is_encoded_as_the_specification_lays_it_out() {
    let mut out = Vec::new();
    let params: &[(&[u8], &[u8])] = &[(b"SCRIPT_NAME", b"/status")];
    encode_request(
        &mut out,
        &Request {
            id: 1,
            keep_conn: true,
            params,
            stdin: b"",
        },
    )
    .unwrap();
    let mut want = vec![1, 1, 0, 1, 0, 8, 0, 0, 0, 1, KEEP_CONN, 0, 0, 0, 0, 0];
    // PARAMS: 11, 7, name, value = 20 bytes, padded with 4 to 24.
    want.extend([1, 4, 0, 1, 0, 20, 4, 0, 11, 7]);
    want.extend(b"SCRIPT_NAME/status");
    want.extend([0; 4]);
    want.extend([1, 4, 0, 1, 0, 0, 0, 0]); // empty PARAMS ends the stream
    want.extend([1, 5, 0, 1, 0, 0, 0, 0]); // empty STDIN
    assert_eq!(out, want);

    // Without FCGI_KEEP_CONN, request 0x0102: the flags byte is 0.
    out.clear();
    encode_request(
        &mut out,
        &Request {
            id: 0x0102,
            keep_conn: false,
            params: &[],
            stdin: b"",
        },
    )
    .unwrap();
    assert_eq!(
        &out[..16],
        &[1, 1, 1, 2, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    );
    let e = encode_request(
        &mut out,
        &Request {
            id: 0,
            keep_conn: false,
            params: &[],
            stdin: b"",
        },
    )
    .unwrap_err();
    assert_eq!(e, EncodeError::NullRequestId);
}

#[test]
fn pairs_take_one_byte_lengths_below_128_and_four_above() {
    let mut out = Vec::new();
    encode_pair(&mut out, &[b'n'; 127], &[b'v'; 128]).unwrap();
    assert_eq!(out[0], 127);
    assert_eq!(&out[1..5], &[0x80, 0, 0, 128]);
    assert_eq!(out.len(), 1 + 4 + 127 + 128);
    let mut big = Vec::new();
    encode_pair(&mut big, b"X", &vec![b'v'; 300_000]).unwrap();
    // 300000 = 0x000493E0, top bit set.
    assert_eq!(&big[..6], &[1, 0x80, 0x04, 0x93, 0xE0, b'X']);

    let pairs = decode_pairs(&out).unwrap();
    assert_eq!(pairs, vec![(&[b'n'; 127][..], &[b'v'; 128][..])]);
    assert_eq!(decode_pairs(&big).unwrap()[0].1.len(), 300_000);
    // Cut short, or lengths that claim more than there is: refused, and
    // nothing allocated for the claim.
    assert_eq!(decode_pairs(&out[..out.len() - 1]), None);
    assert_eq!(decode_pairs(&[0xFF, 0xFF, 0xFF, 0xFF, 0]), None);
    assert_eq!(decode_pairs(&[0x80, 0]), None);
    assert_eq!(decode_pairs(&[1]), None);
    assert_eq!(decode_pairs(b""), Some(vec![]));
}

#[test]
fn a_large_body_goes_in_records_of_65535_padded_to_8() {
    let body: Vec<u8> = (0..150_000u32).map(|i| i as u8).collect();
    let mut out = Vec::new();
    encode_stream(&mut out, RecordType::Stdin, 7, &body);
    let mut r = RecordReader::default();
    let mut pos = 0;
    let mut headers = Vec::new();
    let mut data = Vec::new();
    loop {
        let (n, item) = r.next(&out[pos..]).unwrap();
        pos += n;
        match item {
            None => break,
            Some(Item::Header(h)) => headers.push(h),
            Some(Item::Content(c)) => data.extend_from_slice(c),
            Some(Item::End) => {}
        }
    }
    assert_eq!(pos, out.len());
    assert!(r.between_records());
    assert_eq!(data, body);
    let shape: Vec<(u16, u8)> = headers
        .iter()
        .map(|h| (h.content_length, h.padding_length))
        .collect();
    // 65535 + 65535 + 18930 = 150000; each record's content + padding is a
    // multiple of 8; the empty record ends the stream.
    assert_eq!(shape, vec![(65535, 1), (65535, 1), (18930, 6), (0, 0)]);
    assert!(headers.iter().all(|h| h.kind == 5 && h.request_id == 7));
}

#[test]
fn get_values_and_its_answers() {
    let mut out = Vec::new();
    encode_get_values(&mut out, &["FCGI_MPXS_CONNS"]).unwrap();
    let mut want = vec![1, 9, 0, 0, 0, 17, 7, 0, 15, 0];
    want.extend(b"FCGI_MPXS_CONNS");
    want.extend([0; 7]);
    assert_eq!(out, want);

    let mut pairs = Vec::new();
    encode_pair(&mut pairs, b"FCGI_MPXS_CONNS", b"0").unwrap();
    encode_pair(&mut pairs, b"FCGI_MAX_CONNS", b"32").unwrap();
    let wire = record(10, 0, &pairs, 3);
    let mut p = ResponseParser::values(Limits::default());
    assert_eq!(
        p.feed(&wire).unwrap(),
        Progress::Done {
            consumed: wire.len()
        }
    );
    assert_eq!(
        p.values,
        vec![
            ("FCGI_MPXS_CONNS".to_string(), "0".to_string()),
            ("FCGI_MAX_CONNS".to_string(), "32".to_string())
        ]
    );

    // An application that does not know GET_VALUES says FCGI_UNKNOWN_TYPE.
    let wire = record(11, 0, &[9, 0, 0, 0, 0, 0, 0, 0], 0);
    let mut p = ResponseParser::values(Limits::default());
    assert_eq!(p.feed(&wire).unwrap(), Progress::Done { consumed: 16 });
    assert_eq!(p.unknown_type, Some(9));
    // …whose body is 8 bytes, no less.
    let wire = record(11, 0, &[9, 0, 0], 0);
    let e = ResponseParser::values(Limits::default())
        .feed(&wire)
        .unwrap_err();
    assert_eq!(e, Error::BodyLength { kind: 11, len: 3 });
    // Pairs cut short.
    let wire = record(10, 0, &[15, 1, b'F'], 5);
    let e = ResponseParser::values(Limits::default())
        .feed(&wire)
        .unwrap_err();
    assert_eq!(e, Error::Pairs);
}

#[test]
fn php_fpm_not_found_is_a_404_with_its_stderr() {
    let seen = same_every_split(&not_found(), keep_all());
    assert_eq!(seen.status, 404);
    assert_eq!(seen.body, b"File not found.\n");
    assert_eq!(seen.stderr, b"Primary script unknown");
    assert_eq!(
        seen.end,
        Some(EndRequest {
            app_status: 0,
            protocol_status: ProtocolStatus::RequestComplete
        })
    );
    assert_eq!(seen.outcome, Ok(not_found().len()));
}

#[test]
fn status_defaults_to_200_and_location_alone_to_302() {
    let mut p = ResponseParser::new(1, keep_all());
    let mut wire = record(6, 1, b"Content-Type: text/plain\r\n\r\nhi", 0);
    wire.extend(end_request(1, 0, 0));
    assert!(matches!(p.feed(&wire), Ok(Progress::Done { .. })));
    assert_eq!((p.status, p.body()), (200, &b"hi"[..]));
    assert_eq!(
        p.header("content-type").as_deref(),
        Some(&b"text/plain"[..])
    );

    let mut wire = record(6, 1, b"Location: http://x/\n\n", 0);
    wire.extend(end_request(1, 0, 0));
    let seen = same_every_split(&wire, keep_all());
    assert_eq!((seen.status, seen.body_len), (302, 0));

    for bad in [
        &b"Status: 4\r\n\r\n"[..],
        b"Status: abc\r\n\r\n",
        b"Status: 099\r\n\r\n",
    ] {
        let mut wire = record(6, 1, bad, 0);
        wire.extend(end_request(1, 0, 0));
        assert_eq!(
            feed(&wire, 0, keep_all()).outcome,
            Err(Error::Status.to_string())
        );
    }
}

#[test]
fn the_head_and_body_may_split_across_records_anywhere() {
    let out = b"Status: 200 OK\r\nX-Powered-By: PHP/8.2\r\nContent-type: application/json\r\n\r\n{\"pool\":\"www\"}";
    // One STDOUT record per byte, with padding that varies.
    let mut wire = Vec::new();
    for (i, b) in out.iter().enumerate() {
        wire.extend(record(6, 1, &[*b], (i % 8) as u8));
    }
    wire.extend(record(6, 1, b"", 0));
    wire.extend(end_request(1, 0, 0));
    let seen = same_every_split(&wire, keep_all());
    assert_eq!(seen.status, 200);
    assert_eq!(seen.body, b"{\"pool\":\"www\"}");
    assert_eq!(seen.outcome, Ok(wire.len()));
}

#[test]
fn every_protocol_status_is_named() {
    for (code, status, name) in [
        (0, ProtocolStatus::RequestComplete, "FCGI_REQUEST_COMPLETE"),
        (1, ProtocolStatus::CantMpxConn, "FCGI_CANT_MPX_CONN"),
        (2, ProtocolStatus::Overloaded, "FCGI_OVERLOADED"),
        (3, ProtocolStatus::UnknownRole, "FCGI_UNKNOWN_ROLE"),
        (9, ProtocolStatus::Other(9), "protocol status 9"),
    ] {
        assert_eq!(ProtocolStatus::from_u8(code), status);
        assert_eq!(status.name(), name);
    }
    // A refusal needs no CGI head: it is done, and says why.
    let wire = end_request(1, 7, 2);
    let seen = same_every_split(&wire, keep_all());
    assert_eq!(seen.outcome, Ok(16));
    assert_eq!(
        seen.end,
        Some(EndRequest {
            app_status: 7,
            protocol_status: ProtocolStatus::Overloaded
        })
    );
    assert_eq!(seen.status, 0);
    // A completed request without a head is not a response.
    let e = feed(&end_request(1, 0, 0), 0, keep_all()).outcome;
    assert_eq!(e, Err(Error::NoHead.to_string()));
}

#[test]
fn the_next_response_on_a_kept_connection() {
    let first = not_found().len();
    // Request 2 the second time.
    let mut second = Vec::new();
    let out = b"Status: 404 Not Found\r\n\r\n";
    second.extend(record(6, 2, out, 0));
    second.extend(end_request(2, 0, 0));
    let mut wire = not_found();
    wire.extend(&second);
    let mut p = ResponseParser::new(1, keep_all());
    assert_eq!(p.feed(&wire).unwrap(), Progress::Done { consumed: first });
    p.reset(2);
    assert!(p.is_fresh());
    assert_eq!(
        p.feed(&wire[first..]).unwrap(),
        Progress::Done {
            consumed: second.len()
        }
    );
    assert_eq!((p.status, p.stderr_len), (404, 0));
}

#[test]
fn hostile_records_are_refused_with_their_element_named() {
    let lim = keep_all();
    let refused = |wire: &[u8]| feed(wire, 0, lim).outcome.unwrap_err();
    // Not FastCGI: an HTTP answer where records were expected.
    assert_eq!(
        refused(b"HTTP/1.1 200 OK\r\n\r\n"),
        Error::Version(b'H').to_string()
    );
    // A record for a request we did not send.
    assert_eq!(
        refused(&record(6, 9, b"x", 0)),
        Error::OtherRequest(9).to_string()
    );
    // Records a responder never sends to its client.
    for kind in [1, 2, 4, 5, 8, 9, 12, 255] {
        assert_eq!(
            refused(&record(kind, 1, b"", 0)),
            Error::UnexpectedType {
                kind,
                request_id: 1
            }
            .to_string()
        );
    }
    assert!(refused(&record(4, 1, b"", 0)).contains("FCGI_PARAMS"));
    // An END_REQUEST body that is not 8 bytes.
    assert_eq!(
        refused(&record(3, 1, &[0; 7], 1)),
        Error::BodyLength { kind: 3, len: 7 }.to_string()
    );
    // STDOUT after its stream ended.
    let mut w = record(6, 1, b"", 0);
    w.extend(record(6, 1, b"late", 4));
    assert_eq!(refused(&w), Error::AfterStreamEnd(6).to_string());
    // A bad head line.
    let mut w = record(6, 1, b"no colon here\r\n\r\n", 0);
    w.extend(end_request(1, 0, 0));
    assert_eq!(refused(&w), Error::HeaderLine.to_string());
}

#[test]
fn lengths_that_lie_end_in_eof_not_a_hang() {
    // A header claiming 65535 bytes of content and 255 of padding, with
    // 10 sent: incomplete at the end of file, nothing buffered for it.
    let mut w = vec![1, 6, 0, 1, 0xFF, 0xFF, 0xFF, 0];
    w.extend(b"Status: 20");
    let seen = same_every_split(&w, keep_all());
    assert_eq!(seen.outcome, Err("eof: Incomplete".into()));
    assert_eq!(
        feed(b"", 0, keep_all()).outcome,
        Err("eof: BeforeResponse".into())
    );
    // Padding that runs past the content is skipped, however long.
    let mut w = record(6, 1, b"\r\n", 255);
    w.extend(end_request(1, 0, 0));
    let seen = same_every_split(&w, keep_all());
    assert_eq!((seen.status, seen.outcome), (200, Ok(w.len())));
}

#[test]
fn heads_bodies_and_stderr_are_bounded() {
    let small = Limits {
        head_bytes: 64,
        fields: 4,
        max_body: 100,
        keep_body: 10,
        keep_stderr: 8,
    };
    // A head that never ends: refused at 64 bytes, never buffered past.
    let mut w = Vec::new();
    for _ in 0..100 {
        w.extend(record(6, 1, b"X-Endless: aaaaaaaaaaaaaaaaaaaa\r\n", 0));
    }
    let seen = same_every_split(&w, small);
    assert_eq!(seen.outcome, Err(Error::HeadTooLarge.to_string()));
    let mut p = ResponseParser::new(1, small);
    let _ = p.feed(&w);
    assert!(p.head.len() <= 64 && p.head.capacity() < 4096);

    // Too many fields.
    let mut w = record(6, 1, b"A: 1\nB: 2\nC: 3\nD: 4\nE: 5\n\n", 0);
    w.extend(end_request(1, 0, 0));
    assert_eq!(
        feed(&w, 0, small).outcome,
        Err(Error::TooManyFields.to_string())
    );

    // A body past max_body; the kept part stays at keep_body.
    let mut w = record(6, 1, b"\r\n", 0);
    for _ in 0..20 {
        w.extend(record(6, 1, b"0123456789", 6));
    }
    let seen = same_every_split(&w, small);
    assert_eq!(seen.outcome, Err(Error::BodyTooLarge.to_string()));
    assert_eq!(seen.body, b"0123456789");

    // A flood of stderr: counted whole, kept to its bound.
    let mut w = Vec::new();
    for _ in 0..1000 {
        w.extend(record(7, 1, b"PHP Warning: flood\n", 5));
    }
    w.extend(record(6, 1, b"\r\nok", 4));
    w.extend(end_request(1, 0, 0));
    let seen = feed(&w, 0, small);
    assert_eq!(seen.outcome, Ok(w.len()));
    assert_eq!(seen.stderr_len, 19_000);
    assert_eq!(seen.stderr, b"PHP Warn");
    assert_eq!(seen.body, b"ok");
}

#[test]
fn errors_map_to_outcomes() {
    assert_eq!(
        Error::HeadTooLarge.outcome(),
        sample::Outcome::HeaderTooLarge
    );
    assert_eq!(Error::Version(0).outcome(), sample::Outcome::ProtocolError);
}

#[test]
fn heads_past_the_fast_field_array_are_read_to_the_limit() {
    let mut head = String::new();
    for i in 0..40 {
        head.push_str(&format!("Set-Cookie: c{i}=v\r\n"));
    }
    head.push_str("Status: 201 Created\r\n\r\n");
    let mut wire = record(6, 1, head.as_bytes(), 0);
    wire.extend(end_request(1, 0, 0));
    let mut p = ResponseParser::new(1, keep_all());
    assert!(matches!(p.feed(&wire), Ok(Progress::Done { .. })));
    assert_eq!(p.status, 201);
    assert_eq!(p.headers().len(), 41);
    let few = Limits {
        fields: 40,
        ..keep_all()
    };
    assert_eq!(
        feed(&wire, 0, few).outcome,
        Err(Error::TooManyFields.to_string())
    );
}
