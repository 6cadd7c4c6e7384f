//! A log as it is on disk: plain text, or gzip-compressed (logrotate's
//! `access.log.2.gz`), told apart by its first bytes (gzip's magic number
//! 1f 8b), not by its name, and read as a stream either way: a gzip file
//! of several members (`cat a.gz b.gz`, `gzip --rsyncable`) is read whole.
//! A damaged gzip file stops the import with the byte of the file where
//! the damage is. Other compressions (zstd, xz, bzip2) are named, with the
//! command that reads them.

use crate::Error;
use flate2::bufread::MultiGzDecoder;
use std::io::{self, BufRead, BufReader, Cursor, Read};

/// What is read of a decompressed log at a time.
const BUFFER: usize = 256 << 10;

/// Compressions known by their magic numbers, and the command that reads
/// each (gzip is read here).
const OTHERS: &[(&[u8], &str, &str)] = &[
    (&[0x28, 0xb5, 0x2f, 0xfd], "zstd", "zstdcat"),
    (&[0xfd, b'7', b'z', b'X', b'Z', 0x00], "xz", "xzcat"),
    (b"BZh", "bzip2", "bzcat"),
];

/// The bytes after bzip2's "BZh" and block size: a block's magic, or the
/// end of the stream's (an empty file). A text line may start "BZh1".
const BZIP2_BLOCK: [&[u8]; 2] = [
    &[0x31, 0x41, 0x59, 0x26, 0x53, 0x59],
    &[0x17, 0x72, 0x45, 0x38, 0x50, 0x90],
];

/// The bytes looked at.
const PEEK: usize = 10;

/// `input` as text: decompressed when it starts as gzip does.
pub(crate) fn open<'a>(mut input: Box<dyn BufRead + 'a>) -> Result<Box<dyn BufRead + 'a>, Error> {
    // The first bytes, however the input hands them out (a pipe may give
    // one at a time), then put back in front of the rest.
    let mut head = Vec::with_capacity(PEEK);
    while head.len() < PEEK {
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::new(format!("cannot read: {e}"))),
        };
        if avail.is_empty() {
            break;
        }
        let n = avail.len().min(PEEK - head.len());
        head.extend_from_slice(&avail[..n]);
        input.consume(n);
    }
    for (magic, name, command) in OTHERS {
        // bzip2's "BZh" is followed by the block size, a digit 1 to 9.
        let bzip2 = *name != "bzip2"
            || (matches!(head.get(3), Some(b'1'..=b'9'))
                && BZIP2_BLOCK.iter().any(|m| head.get(4..) == Some(m)));
        if head.starts_with(magic) && bzip2 {
            return Err(Error::new(format!(
                "compressed with {name}, which yace does not read (gzip it does): give it \
                 decompressed, `{command} FILE | yace import access-log - …`"
            )));
        }
    }
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let input = Cursor::new(head).chain(input);
    if !gzip {
        return Ok(Box::new(input));
    }
    let gunzip = Gunzip {
        decoder: MultiGzDecoder::new(Counted {
            inner: input,
            at: 0,
        }),
    };
    Ok(Box::new(BufReader::with_capacity(BUFFER, gunzip)))
}

/// A reader that counts the bytes taken from it: where in the compressed
/// file the decoder is.
struct Counted<R> {
    inner: R,
    at: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        self.at += n as u64;
    }
}

/// The decompressed text; an error says at which byte of the compressed
/// file it was met.
struct Gunzip<R: BufRead> {
    decoder: MultiGzDecoder<Counted<R>>,
}

impl<R: BufRead> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.decoder.read(buf) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                let at = self.decoder.get_ref().at;
                let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                    format!(
                        "the gzip data ends early, at byte {at} of the file (cut short, or \
                         still being written)"
                    )
                } else {
                    format!("the gzip data is damaged at byte {at} of the file ({e})")
                };
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{what}; `gzip -t FILE` checks a file"),
                ))
            }
        }
    }
}
