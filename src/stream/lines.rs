//! Splits a byte stream into lines as the bytes arrive. Chunks may end
//! anywhere (inside a UTF-8 character too); memory is one reused buffer that
//! grows to the largest line and no further.

use std::io::{self, Read};

/// The longest line accepted: far above any real message (a large `__state__`
/// line is a few MiB), low enough that a file with no newlines cannot eat
/// the machine's memory.
pub const MAX_LINE: usize = 1 << 30;

/// The buffer's first size: a network read or two fits whole.
const INITIAL_BUFFER: usize = 512 * 1024;

/// Past this size the buffer grows by a fixed step instead of doubling, so
/// a long line costs its length plus at most one step, not twice its length
/// (large buffers are reallocated in place by the allocator, so small steps
/// cost little).
const LINEAR_GROWTH_FROM: usize = 16 << 20;

/// The fixed step of growth past [`LINEAR_GROWTH_FROM`].
const LINEAR_STEP: usize = 4 << 20;

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

/// Reads lines from any `Read` (an HTTP body, a file, stdin) with one buffer.
pub struct LineReader<R> {
    inner: R,
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    line_number: u64,
    max_line: usize,
    eof: bool,
    failure: Option<io::Error>,
    /// Where the next line's `\n` is, when the last call already found it.
    next_newline: Option<usize>,
}

impl<R: Read> LineReader<R> {
    /// A reader with the default line limit [`MAX_LINE`].
    pub fn new(inner: R) -> Self {
        Self::with_max_line(inner, MAX_LINE)
    }

    /// A reader that refuses lines longer than `max_line` bytes.
    pub fn with_max_line(inner: R, max_line: usize) -> Self {
        LineReader {
            inner,
            buffer: vec![0; INITIAL_BUFFER.min(max_line.max(1))],
            start: 0,
            end: 0,
            line_number: 0,
            max_line,
            eof: false,
            failure: None,
            next_newline: None,
        }
    }

    /// The next line, `None` at the end of the stream. A final line without
    /// `\n` is returned as it is. An error from the source (a dropped
    /// connection) comes after the bytes that did arrive, which are returned
    /// first as an unterminated line; a line over the limit is an
    /// `InvalidData` error.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        match self.next_line_end()? {
            Some(line_end) => Ok(Some(self.take(line_end))),
            None => Ok(None),
        }
    }

    /// Where the next line ends, reading until it is complete (or the
    /// source ends or fails after some bytes of it).
    fn next_line_end(&mut self) -> io::Result<Option<usize>> {
        if let Some(err) = self.failure.take() {
            return Err(err);
        }
        if let Some(newline) = self.next_newline.take() {
            return Ok(Some(newline + 1));
        }
        let mut searched = self.start;
        loop {
            if let Some(offset) = memchr::memchr(b'\n', &self.buffer[searched..self.end]) {
                return Ok(Some(searched + offset + 1));
            }
            searched = self.end;
            if self.eof {
                return Ok((self.start < self.end).then_some(self.end));
            }
            self.make_room()?;
            searched -= self.compact();
            match self.inner.read(&mut self.buffer[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) if self.start == self.end => return Err(err),
                Err(err) => {
                    self.failure = Some(err);
                    return Ok(Some(self.end));
                }
            }
        }
    }

    fn take(&mut self, line_end: usize) -> Line<'_> {
        let start = self.start;
        self.start = line_end;
        self.line_number += 1;
        self.next_newline = memchr::memchr(b'\n', &self.buffer[line_end..self.end]).map(|at| line_end + at);
        let more_buffered = self.next_newline.is_some();
        Line {
            bytes: &self.buffer[start..line_end],
            number: self.line_number,
            followed_by: self.failure.as_ref(),
            more_buffered,
        }
    }

    /// Ensures there is free space after the data, growing the buffer only
    /// when the pending (incomplete) line fills it.
    fn make_room(&mut self) -> io::Result<()> {
        let pending = self.end - self.start;
        if pending >= self.max_line {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "line {} is longer than {} MiB",
                    self.line_number + 1,
                    self.max_line >> 20
                ),
            ));
        }
        if pending == self.buffer.len() {
            let len = self.buffer.len();
            let step = if len < LINEAR_GROWTH_FROM { len } else { LINEAR_STEP };
            let grown = (len + step).min(self.max_line.max(1)).max(pending + 1);
            self.buffer.resize(grown, 0);
        }
        Ok(())
    }

    /// Moves the pending bytes (the start of a line) to the front of the
    /// buffer when less than half of it is free at its end, so reads stay
    /// large; returns how far they moved. A line moves at most once.
    fn compact(&mut self) -> usize {
        if self.start == 0 || self.buffer.len() - self.end >= self.buffer.len() / 2 {
            return 0;
        }
        let shift = self.start;
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= shift;
        self.start = 0;
        shift
    }
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
        let mut reader = LineReader::with_max_line(Chunked { data, sizes, next: 0 }, max_line);
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
        let long = vec![b'x'; INITIAL_BUFFER * 3 + 17];
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
        let mut reader = LineReader::new(Dropping(b"one\ntw"));
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
