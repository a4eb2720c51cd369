//! Images sent with a question (`ask --image`, a suite case's `images`),
//! as the chat request carries them: the bytes in base64, the type told
//! from the bytes (PNG, JPEG, GIF, WebP), the file's name. Read whole and
//! checked before anything is sent.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use anyhow::Result;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::error::usage;
use crate::input::{read_input, Deadline, Input};

/// The largest image sent: 20 MiB.
pub const MAX_IMAGE: u64 = 20 << 20;

pub use crate::domain::Image;

impl Image {
    /// The image in the file `path` (`-` is standard input), as `shown`
    /// names it in messages (`--image chart.png`, `images of case "x"`),
    /// waiting until `deadline` at most (exit 124) and no longer than the
    /// first signal. Exit 2 for a file that cannot be read, is over
    /// [`MAX_IMAGE`], or is none of the four types.
    pub fn read(path: &Path, deadline: Option<Deadline>, shown: &str) -> Result<Image> {
        let input = Input::of(path);
        let name = match &input {
            Input::Stdin => "stdin".to_string(),
            Input::File(_) => path.file_name().map_or_else(
                || path.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            ),
        };
        let bytes = read_input(input, MAX_IMAGE, deadline, shown)?
            .map_err(|err| usage(format!("{shown}: cannot read it: {err}")))?;
        if bytes.len() as u64 > MAX_IMAGE {
            return Err(usage(format!("{shown}: over 20 MiB, the most an image may be")));
        }
        let Some(mime_type) = sniff(&bytes) else {
            return Err(not_an_image(shown));
        };
        Ok(Image {
            data: STANDARD.encode(&bytes),
            mime_type,
            name,
        })
    }
}

/// An image a suite names, checked when the suite is read (a regular
/// file: its size and type) and read when its case runs ([`Images`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageFile {
    /// Where it is.
    pub path: PathBuf,
    /// How messages name it (`suite.toml:4: images: chart.png`).
    pub shown: String,
}

impl ImageFile {
    /// The image at `path`, checked now when it is a regular file (exit 2
    /// for one that cannot be read, is over [`MAX_IMAGE`] or is none of
    /// the four types); anything else (a FIFO) is read, and checked, when
    /// its case runs.
    pub fn checked(path: PathBuf, shown: String) -> Result<ImageFile> {
        let cannot = |err: std::io::Error| usage(format!("{shown}: cannot read it: {err}"));
        let metadata = std::fs::metadata(&path).map_err(cannot)?;
        if metadata.is_file() {
            if metadata.len() > MAX_IMAGE {
                return Err(usage(format!("{shown}: over 20 MiB, the most an image may be")));
            }
            let mut start = Vec::new();
            std::io::Read::read_to_end(&mut std::fs::File::open(&path).map_err(cannot)?.take(16), &mut start)
                .map_err(cannot)?;
            if sniff(&start).is_none() {
                return Err(not_an_image(&shown));
            }
        }
        Ok(ImageFile { path, shown })
    }
}

/// The images of a run, each read once while a case that sends it runs:
/// cases that name the same file share one copy, and it is let go when
/// none of them holds it.
#[derive(Debug, Default)]
pub struct Images {
    read: Mutex<HashMap<PathBuf, Weak<Image>>>,
}

impl Images {
    /// `files`, read now (each until `deadline` at most), or the copy a
    /// running case already holds.
    pub fn load(&self, files: &[ImageFile], deadline: &Deadline) -> Result<Vec<Arc<Image>>> {
        files
            .iter()
            .map(|file| {
                let held = self
                    .read
                    .lock()
                    .ok()
                    .and_then(|read| read.get(&file.path).and_then(Weak::upgrade));
                if let Some(image) = held {
                    return Ok(image);
                }
                let image = Arc::new(Image::read(&file.path, Some(deadline.clone()), &file.shown)?);
                if let Ok(mut read) = self.read.lock() {
                    read.retain(|_, image| image.strong_count() > 0);
                    read.insert(file.path.clone(), Arc::downgrade(&image));
                }
                Ok(image)
            })
            .collect()
    }
}

/// The error for bytes that are no image the service takes.
fn not_an_image(shown: &str) -> anyhow::Error {
    usage(format!(
        "{shown}: not an image the service takes (PNG, JPEG, GIF or WebP)"
    ))
}

/// The type of an image from its first bytes; `None` for anything else.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_is_told_from_its_bytes() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0"), Some("image/png"));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a..."), Some("image/gif"));
        assert_eq!(sniff(b"GIF87a..."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"%PDF-1.7"), None);
        assert_eq!(sniff(b"\x89PN"), None);
        assert_eq!(sniff(b""), None);
    }
}
