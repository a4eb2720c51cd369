//! Splits a byte stream into lines as the bytes arrive. The bytes come a
//! chunk at a time ([`Chunks`]) and chunks may end anywhere (inside a UTF-8
//! character too). A line inside one chunk is lent straight from it; only
//! a line that spans chunks is copied, into one reused buffer that grows to
//! the largest such line and no further.

use std::io::{self, Read};

/// The longest line accepted: far above any real message (a large `__state__`
/// line is a few MiB), low enough that a file with no newlines cannot eat
/// the machine's memory.
pub const MAX_LINE: usize = 1 << 30;

/// How much a source is asked for at once (a plain reader, [`Reads`], and
/// the worker of a network stream): its buffers stay in the processor's
/// cache while their lines are read, where 256 KiB reads doubled the
/// kernel's time, and a fast source (a file) is still read in few calls.
pub const READ_SIZE: usize = 64 * 1024;

/// Past this size the buffer of a line that spans chunks grows by a fixed
/// step instead of doubling, so a long line costs its length plus at most
/// one step, not twice its length (large buffers are reallocated in place
/// by the allocator, so small steps cost little).
const LINEAR_GROWTH_FROM: usize = 16 << 20;

/// The fixed step of growth past [`LINEAR_GROWTH_FROM`].
const LINEAR_STEP: usize = 4 << 20;

/// Where a [`LineReader`] gets its bytes: a chunk at a time, handed over
/// rather than copied.
pub trait Chunks {
    /// Puts the next chunk in `buffer` (filling it, or replacing it with a
    /// buffer of its own) and returns its length: the chunk is
    /// `buffer[..n]`; 0 at the end of the stream.
    fn next_chunk(&mut self, buffer: &mut Vec<u8>) -> io::Result<usize>;
}

/// Any reader (a file, stdin, a test's bytes) as [`Chunks`]: each read
/// fills one reused buffer.
pub struct Reads<R>(pub R);

impl<R: Read> Chunks for Reads<R> {
    fn next_chunk(&mut self, buffer: &mut Vec<u8>) -> io::Result<usize> {
        if buffer.len() < READ_SIZE {
            buffer.resize(READ_SIZE, 0);
        }
        loop {
            match self.0.read(buffer) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                read => return read,
            }
        }
    }
}

/// A line of the stream.
#[derive(Debug)]
pub struct Line<'a> {
    /// The line's bytes as received, including its `\n` when it had one:
    /// concatenating every `bytes` gives the stream back exactly.
    pub bytes: &'a [u8],
    /// 1-based line number, for error messages.
    pub number: u64,
    /// The source's failure that comes right after this line (which is then
    /// the partial last line): the next call returns it.
    pub followed_by: Option<&'a io::Error>,
    /// True when another complete line is already buffered, so the next
    /// call returns at once (a writer may delay its flush until this is false).
    pub more_buffered: bool,
}

impl<'a> Line<'a> {
    /// The content without the line terminator (`\n` or `\r\n`).
    pub fn content(&self) -> &'a [u8] {
        let content = self.bytes.strip_suffix(b"\n").unwrap_or(self.bytes);
        content.strip_suffix(b"\r").unwrap_or(content)
    }

    /// True when the line ended with `\n` (only the last line of a stream may not).
    pub fn is_terminated(&self) -> bool {
        self.bytes.ends_with(b"\n")
    }
}

/// Reads lines from [`Chunks`] (the stream source, or a plain reader
/// through [`Reads`]).
pub struct LineReader<C> {
    source: C,
    /// The chunk being read, `chunk[..filled]`.
    chunk: Vec<u8>,
    filled: usize,
    /// Where the next line starts in the chunk.
    start: usize,
    /// The beginning of a line that spans chunks.
    carry: Vec<u8>,
    /// The last line returned was `carry`: it starts afresh next time.
    carried: bool,
    /// Where the next line's `\n` is in the chunk, when the last call
    /// already found it.
    next_newline: Option<usize>,
    line_number: u64,
    max_line: usize,
    eof: bool,
    failure: Option<io::Error>,
}

impl<C: Chunks> LineReader<C> {
    /// A reader with the default line limit [`MAX_LINE`].
    pub fn new(source: C) -> Self {
        Self::with_max_line(source, MAX_LINE)
    }

    /// A reader that refuses lines longer than `max_line` bytes.
    pub fn with_max_line(source: C, max_line: usize) -> Self {
        LineReader {
            source,
            chunk: Vec::new(),
            filled: 0,
            start: 0,
            carry: Vec::new(),
            carried: false,
            next_newline: None,
            line_number: 0,
            max_line,
            eof: false,
            failure: None,
        }
    }

    /// The next line, `None` at the end of the stream. A final line without
    /// `\n` is returned as it is. An error from the source (a dropped
    /// connection) comes after the bytes that did arrive, which are returned
    /// first as an unterminated line; a line over the limit is an
    /// `InvalidData` error.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        if std::mem::take(&mut self.carried) {
            self.carry.clear();
        }
        loop {
            let newline = self
                .next_newline
                .take()
                .or_else(|| memchr::memchr(b'\n', &self.chunk[self.start..self.filled]).map(|at| self.start + at));
            if let Some(newline) = newline {
                let (start, end) = (self.start, newline + 1);
                self.check_length(self.carry.len() + newline - start)?;
                self.start = end;
                self.line_number += 1;
                self.next_newline = memchr::memchr(b'\n', &self.chunk[end..self.filled]).map(|at| end + at);
                let bytes = match self.carry.is_empty() {
                    true => &self.chunk[start..end],
                    false => {
                        append(&mut self.carry, &self.chunk[start..end]);
                        self.carried = true;
                        &self.carry[..]
                    }
                };
                return Ok(Some(Line {
                    bytes,
                    number: self.line_number,
                    followed_by: None,
                    more_buffered: self.next_newline.is_some(),
                }));
            }
            // The rest of the chunk begins a line that goes on in the next.
            if self.start < self.filled {
                self.check_length(self.carry.len() + self.filled - self.start)?;
                append(&mut self.carry, &self.chunk[self.start..self.filled]);
                self.start = self.filled;
            }
            if let Some(err) = self.failure.take() {
                return Err(err);
            }
            if self.eof {
                return Ok(self.last_line());
            }
            match self.source.next_chunk(&mut self.chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => (self.filled, self.start) = (n, 0),
                Err(err) if self.carry.is_empty() => return Err(err),
                Err(err) => {
                    self.failure = Some(err);
                    return Ok(self.last_line());
                }
            }
        }
    }

    /// The line begun in `carry` that no `\n` ended, if any (the stream's
    /// last line), followed by the source's failure when it broke off.
    fn last_line(&mut self) -> Option<Line<'_>> {
        if self.carry.is_empty() {
            return None;
        }
        self.line_number += 1;
        self.carried = true;
        Some(Line {
            bytes: &self.carry,
            number: self.line_number,
            followed_by: self.failure.as_ref(),
            more_buffered: false,
        })
    }

    /// Refuses the line being read once it is `length` bytes long (its
    /// `\n` aside) and that is over the limit.
    fn check_length(&self, length: usize) -> io::Result<()> {
        if length < self.max_line {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "line {} is longer than {} MiB",
                self.line_number + 1,
                self.max_line >> 20
            ),
        ))
    }
}

/// Appends `bytes` to a line that spans chunks, growing its buffer by
/// doubling and, past [`LINEAR_GROWTH_FROM`], by [`LINEAR_STEP`].
fn append(carry: &mut Vec<u8>, bytes: &[u8]) {
    let needed = carry.len() + bytes.len();
    if needed > carry.capacity() {
        let capacity = carry.capacity();
        let step = if capacity < LINEAR_GROWTH_FROM {
            capacity
        } else {
            LINEAR_STEP
        };
        carry.reserve_exact((capacity + step).max(needed) - carry.len());
    }
    carry.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that hands out its bytes in chunks of the given sizes, the
    /// way a network delivers them.
    struct Chunked<'a> {
        data: &'a [u8],
        sizes: Vec<usize>,
        next: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes.get(self.next).copied().unwrap_or(usize::MAX);
            self.next += 1;
            let n = size.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn collect(data: &[u8], sizes: Vec<usize>, max_line: usize) -> io::Result<Vec<Vec<u8>>> {
        let mut reader = LineReader::with_max_line(Reads(Chunked { data, sizes, next: 0 }), max_line);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line()? {
            lines.push(line.bytes.to_vec());
        }
        Ok(lines)
    }

    #[test]
    fn any_chunking_gives_the_same_lines_and_bytes() {
        let data = "{\"a\":\"é€😀\"}\r\n\n{\"b\":2}\nlast-without-newline".as_bytes();
        let expected = collect(data, vec![], MAX_LINE).unwrap();
        assert_eq!(expected.concat(), data);
        assert_eq!(expected.len(), 4);
        let mut seed = 7u64;
        for _ in 0..500 {
            let sizes = (0..64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % 5) as usize + 1
                })
                .collect();
            assert_eq!(collect(data, sizes, 32).unwrap(), expected);
        }
    }

    #[test]
    fn lines_longer_than_the_first_buffer_grow_it() {
        let long = vec![b'x'; READ_SIZE * 3 + 17];
        let mut data = long.clone();
        data.push(b'\n');
        data.extend_from_slice(b"next\n");
        let lines = collect(&data, vec![1000; 1000], MAX_LINE).unwrap();
        assert_eq!(lines[0].len(), long.len() + 1);
        assert_eq!(lines[1], b"next\n");
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_naming_it() {
        let err = collect(b"ok\n0123456789abcdef-and-more\n", vec![], 8).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    /// A source that delivers some bytes and then fails like a dropped connection.
    struct Dropping<'a>(&'a [u8]);

    impl Read for Dropping<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset"));
            }
            let n = self.0.len().min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn bytes_that_arrived_before_a_failure_come_first() {
        let mut reader = LineReader::new(Reads(Dropping(b"one\ntw")));
        assert_eq!(reader.next_line().unwrap().unwrap().bytes, b"one\n");
        let partial = reader.next_line().unwrap().unwrap();
        assert_eq!((partial.bytes, partial.is_terminated()), (&b"tw"[..], false));
        assert_eq!(
            partial.followed_by.map(io::Error::kind),
            Some(io::ErrorKind::ConnectionReset)
        );
        assert_eq!(reader.next_line().unwrap_err().kind(), io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn content_strips_lf_and_crlf() {
        let line = Line {
            bytes: b"{}\r\n",
            number: 1,
            followed_by: None,
            more_buffered: false,
        };
        assert_eq!(line.content(), b"{}");
        assert!(line.is_terminated());
        let last = Line {
            bytes: b"{}",
            number: 2,
            followed_by: None,
            more_buffered: false,
        };
        assert_eq!(last.content(), b"{}");
        assert!(!last.is_terminated());
    }
}
