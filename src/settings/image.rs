//! Images sent with a question (`ask --image`, a suite case's `images`),
//! as the chat request carries them: the bytes in base64, the type told
//! from the bytes (PNG, JPEG, GIF, WebP), the file's name. Read whole and
//! checked before anything is sent.

use std::io::Read;
use std::path::Path;

use anyhow::Result;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Serialize;

use crate::error::usage;

/// The largest image sent: 20 MiB.
pub const MAX_IMAGE: u64 = 20 << 20;

/// One image of the chat request's `images`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// The image's bytes, in base64.
    pub data: String,
    /// Its type, told from its bytes: `image/png`, `image/jpeg`,
    /// `image/gif` or `image/webp`.
    pub mime_type: &'static str,
    /// The file's name (`stdin` for standard input).
    pub name: String,
}

impl Image {
    /// The image in the file `path` (`-` is standard input), as `shown`
    /// names it in messages (`--image chart.png`, `images of case "x"`).
    /// Exit 2 for a file that cannot be read, is over [`MAX_IMAGE`], or
    /// is none of the four types.
    pub fn read(path: &Path, shown: &str) -> Result<Image> {
        let cannot = |err: std::io::Error| usage(format!("{shown}: cannot read it: {err}"));
        let (source, name): (Box<dyn Read>, String) = match path.to_str() {
            Some("-") => (Box::new(std::io::stdin()), "stdin".to_string()),
            _ => {
                let file = std::fs::File::open(path).map_err(cannot)?;
                let name = path.file_name().map_or_else(
                    || path.display().to_string(),
                    |name| name.to_string_lossy().into_owned(),
                );
                (Box::new(file), name)
            }
        };
        let mut bytes = Vec::new();
        source.take(MAX_IMAGE + 1).read_to_end(&mut bytes).map_err(cannot)?;
        if bytes.len() as u64 > MAX_IMAGE {
            return Err(usage(format!("{shown}: over 20 MiB, the most an image may be")));
        }
        let Some(mime_type) = sniff(&bytes) else {
            return Err(usage(format!(
                "{shown}: not an image the service takes (PNG, JPEG, GIF or WebP)"
            )));
        };
        Ok(Image {
            data: STANDARD.encode(&bytes),
            mime_type,
            name,
        })
    }
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
