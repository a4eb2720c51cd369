//! A turn's question — its text, the thread it continues, its message id,
//! its images — and what a record of the turn keeps of its answer.

use std::sync::Arc;

use serde::Serialize;

use crate::text::head;

/// The most of an answer a record of a turn keeps (the history, a `check`
/// report): a longer one is kept cut, ending with [`ANSWER_CUT_MARKER`].
pub const MAX_KEPT_ANSWER: usize = 1 << 20;

/// What ends an answer kept cut.
pub const ANSWER_CUT_MARKER: &str = "\n\n[analyst: the answer was longer than 1 MiB; its first 1 MiB is kept]";

/// An answer as a record of its turn keeps it: its first
/// [`MAX_KEPT_ANSWER`] bytes (never splitting a character), and
/// [`ANSWER_CUT_MARKER`] when there was more (`cut`: the stream's copy
/// already lacks some).
pub fn kept_answer(answer: &str, cut: bool) -> String {
    let mut kept = head(answer, MAX_KEPT_ANSWER).to_string();
    if cut || kept.len() < answer.len() {
        kept.push_str(ANSWER_CUT_MARKER);
    }
    kept
}

/// The question of `ask` and the thread it belongs to (none for a saved
/// stream read again).
#[derive(Clone, Debug, Default)]
pub struct Question {
    /// The question (`None` prints the thread so far).
    pub input: Option<String>,
    /// The thread to continue.
    pub chat_id: Option<String>,
    /// The question's `messageId` (`<unix ms>-message`, new for each
    /// question), or the suspended one `--resume` names; none for a read of
    /// the thread.
    pub message_id: Option<String>,
    /// `activeBranchName`.
    pub branch: Option<String>,
    /// `isDefaultBranch` (sent only with a branch).
    pub default_branch: bool,
    /// Images sent with the question (`--image`).
    pub images: Vec<Arc<Image>>,
}

impl Question {
    /// True for a read of the thread so far: no question and no turn to
    /// resume, so nothing is asked (and no turn recorded).
    pub fn reads_thread(&self) -> bool {
        self.input.is_none() && self.message_id.is_none()
    }
}

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

/// A new `messageId`: the time now in Unix milliseconds, then `-message`.
pub fn new_message_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    format!("{millis}-message")
}

/// True for a `messageId` of the service's form: 13 or more digits, then
/// `-message`.
pub fn is_message_id(id: &str) -> bool {
    id.strip_suffix("-message")
        .is_some_and(|digits| digits.len() >= 13 && digits.bytes().all(|b| b.is_ascii_digit()))
}
