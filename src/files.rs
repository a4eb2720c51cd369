//! Files that hold what only their owner may read: created 0600 (folders
//! 0700), not before there is something to write ([`LazyFile`]), or written
//! whole beside their place and renamed over it ([`temporary_beside`]);
//! and no command writing a file it reads ([`check_files_apart`]).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::error::usage;

/// Creates (or truncates) `path` for data only its owner may read: a
/// stream, a report, rows. Mode 0600, also when the file already existed.
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

/// How [`is_link`] names what it finds, in a refusal.
#[cfg(not(windows))]
pub const LINK: &str = "a symbolic link";
/// How [`is_link`] names what it finds, in a refusal.
#[cfg(windows)]
pub const LINK: &str = "a link or reparse point";

/// True when `path` is something the system would follow elsewhere: a
/// symbolic link (a dangling one too) and, on Windows, any reparse point (a
/// junction or mount point as well). What only we may read or write (the
/// history database and its folder) is never reached through one.
pub fn is_link(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|meta| is_link_metadata(&meta))
}

/// [`is_link`] for what the system said of a path or an open file.
pub fn is_link_metadata(meta: &std::fs::Metadata) -> bool {
    #[cfg(windows)]
    {
        use std::os::windows::fs::MetadataExt;
        const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;
        if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return true;
        }
    }
    meta.file_type().is_symlink()
}

/// Creates the folder `path` and any missing parent for data only its
/// owner may read (`check --save`): mode 0700 for each folder created; one
/// that exists is left as it is.
pub fn create_private_folder(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

/// A private file ([`create_private`]) created on its first write, so that
/// nothing is created or truncated before there is something to keep (a
/// request the service refused leaves an earlier file as it was).
pub struct LazyFile {
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

impl LazyFile {
    /// The file at `path`, not created yet.
    pub fn new(path: PathBuf) -> Self {
        LazyFile { path, file: None }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True once the file was created (something was written to it).
    pub fn created(&self) -> bool {
        self.file.is_some()
    }

    fn open(&mut self) -> io::Result<&mut BufWriter<File>> {
        match &mut self.file {
            Some(file) => Ok(file),
            file => Ok(file.insert(BufWriter::new(create_private(&self.path)?))),
        }
    }
}

impl Write for LazyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.open()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.open()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

/// A private temporary file in `path`'s folder, to be renamed over it
/// once it is whole: `path` is never left half-written.
pub fn temporary_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    tempfile::Builder::new().prefix(".analyst-").tempfile_in(folder)
}

/// Writes `bytes` as the whole of `path` (created 0600): into a temporary
/// file beside it, synced, then renamed over it, so that `path` is never
/// half-written and an earlier file stays as it was when this fails.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = temporary_beside(path)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map(drop).map_err(|err| err.error)
}

/// Appends `text` to `path` in one write (created 0600 when it is not
/// there): a summary added to a file others append to as well
/// (`$GITHUB_STEP_SUMMARY`).
pub fn append(path: &Path, text: &str) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// No file a command writes (each given with its flag) is one it reads
/// (each named as "the --replay file"), which it would empty before reading
/// it (a nightly job overwriting its own saved stream), nor one it also
/// writes by another flag. Files are compared as the system sees them: a
/// link or another spelling of a file is that file.
pub fn check_files_apart(read: &[(&str, &Path)], written: &[(&str, &Path)]) -> Result<()> {
    let same = |a: &Path, b: &Path| a == b || same_file::is_same_file(a, b).unwrap_or(false);
    for (at, (flag, path)) in written.iter().enumerate() {
        if let Some((source, _)) = read.iter().find(|(_, read)| same(path, read)) {
            return Err(usage(format!(
                "{flag} {} is {source}, which this command reads: writing it would destroy it",
                path.display()
            )));
        }
        if let Some((other, _)) = written[..at].iter().find(|(_, other)| same(path, other)) {
            return Err(usage(format!(
                "{flag} {} is also the {other} file: give each its own",
                path.display()
            )));
        }
    }
    Ok(())
}

/// How many bytes of a file name [`file_stem`] keeps of the text it
/// names, before the hash that keeps it unique.
const STEM_BYTES: usize = 60;

/// A file name's stem made from foreign text (a case name, a question):
/// lower-case ASCII letters and digits, every other run of characters one
/// `-`; cut to [`STEM_BYTES`] and then told apart by the first 8 hex
/// digits of the whole text's SHA-256, so that long names that share a
/// start stay distinct and no name is too long for a file system.
pub fn file_stem(text: &str) -> String {
    let mut stem = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            stem.push(c.to_ascii_lowercase());
        } else if !stem.ends_with('-') {
            stem.push('-');
        }
    }
    let stem = stem.trim_matches('-');
    if stem.len() <= STEM_BYTES {
        return match stem.is_empty() {
            true => "case".to_string(),
            false => stem.to_string(),
        };
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hash: String = digest.as_ref()[..4].iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{}-{hash}", stem[..STEM_BYTES].trim_end_matches('-'))
}
