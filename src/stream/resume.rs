//! A turn read over more than one connection. When a connection drops or
//! the turn is suspended, the same `chatId` and `messageId` are sent again,
//! and the service answers by replaying the thread (this turn's lines so
//! far among it) before it streams the rest. [`TurnLines`] counts what the
//! turn has read; [`Resumed`] tells, line by line, which lines of the new
//! connection repeat them, so that a resumed turn reads the same as an
//! uninterrupted one: replayed lines are not counted twice.
//!
//! The turn's lines are its messages from its user echo on (or from
//! `__cutoff__`, whichever comes first in the first connection), the
//! special lines (`__cutoff__`, `__state__`, `__suspended__`, `__aborted__`,
//! `__usage__`) aside. A resumed connection repeats them either before its
//! `__cutoff__`, after the thread's past, or right after it, from the echo.

use super::message::{Message, ABORTED_ID, CUTOFF_ID, STATE_ID, SUSPENDED_ID, USAGE_ID};

/// True for the lines that say something about the stream rather than
/// being part of the turn.
fn is_special(id: &str) -> bool {
    [CUTOFF_ID, STATE_ID, SUSPENDED_ID, ABORTED_ID, USAGE_ID].contains(&id)
}

/// The lines a turn has read, over all its connections.
#[derive(Debug, Default)]
pub struct TurnLines {
    read: usize,
    echo: Option<String>,
}

impl TurnLines {
    /// Counts a line the turn took in: `__cutoff__` starts the count again
    /// (what came before was the thread's past), and the first user message
    /// after it is the turn's echo.
    pub fn took(&mut self, message: &Message<'_>) {
        if message.id() == CUTOFF_ID {
            *self = TurnLines::default();
            return;
        }
        if is_special(message.id()) {
            return;
        }
        if message.is_user() && self.echo.is_none() {
            self.echo = Some(message.id().to_string());
        }
        self.read += 1;
    }

    /// The state of a new connection that resumes the turn sent with
    /// `message_id`.
    pub fn resume(&self, message_id: Option<&str>) -> Resumed {
        Resumed {
            to_repeat: self.read,
            echoes: [self.echo.clone(), message_id.map(str::to_string)]
                .into_iter()
                .flatten()
                .collect(),
            phase: Phase::Past,
        }
    }
}

/// Where a resumed connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before `__cutoff__`, before the turn's echo: the thread's past.
    Past,
    /// Before `__cutoff__`, the turn's lines being replayed.
    TurnReplayed,
    /// Just after `__cutoff__`, the turn not replayed yet: its echo next
    /// means it is replayed from there.
    AfterCutoff,
    /// After `__cutoff__`: counting what is repeated, then all new.
    Streaming,
}

/// A connection that resumes a turn, as it goes.
#[derive(Debug)]
pub struct Resumed {
    /// Lines of the turn already read that the replay still has to repeat.
    to_repeat: usize,
    /// The ids the turn's user echo may carry: the one read, the message id.
    echoes: Vec<String>,
    phase: Phase,
}

impl Resumed {
    /// True when `message` repeats what the turn already read (or is the
    /// thread's past, or this connection's `__cutoff__`): it is not taken
    /// in again.
    pub fn repeats(&mut self, message: &Message<'_>) -> bool {
        let is_echo = message.is_user() && self.echoes.iter().any(|id| id == message.id());
        if message.id() == CUTOFF_ID && matches!(self.phase, Phase::Past | Phase::TurnReplayed) {
            // A turn replayed before the cutoff was replayed whole: what
            // follows is new.
            if self.phase == Phase::TurnReplayed {
                self.to_repeat = 0;
            }
            self.phase = match self.phase {
                Phase::Past => Phase::AfterCutoff,
                _ => Phase::Streaming,
            };
            return true;
        }
        match self.phase {
            Phase::Past if is_echo => self.phase = Phase::TurnReplayed,
            Phase::Past => return true,
            Phase::TurnReplayed if is_special(message.id()) => return true,
            Phase::AfterCutoff => {
                if !is_echo {
                    self.to_repeat = 0;
                }
                self.phase = Phase::Streaming;
            }
            Phase::TurnReplayed | Phase::Streaming => {}
        }
        if is_special(message.id()) || self.to_repeat == 0 {
            return false;
        }
        self.to_repeat -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `stream` a turn takes in when it resumes after reading
    /// `first` (one connection each), as their ids.
    fn taken_after(first: &[&str], stream: &[&str]) -> Vec<String> {
        fn parse<'a>(line: &&'a str) -> Message<'a> {
            crate::stream::parse::message(line.as_bytes()).unwrap().unwrap()
        }
        let mut lines = TurnLines::default();
        for line in first {
            lines.took(&parse(line));
        }
        let mut resumed = lines.resume(Some("1700000000000-message"));
        stream
            .iter()
            .filter(|line| !resumed.repeats(&parse(line)))
            .map(|line| parse(line).id().to_string())
            .collect()
    }

    const CUTOFF: &str = r#"{"id":"__cutoff__","state":{"chatId":"c1"}}"#;
    const OLD_Q: &str = r#"{"id":"old","role":"user","content":"yesterday"}"#;
    const OLD_A: &str = r#"{"id":"old-a","role":"assistant","content":"then","isDelta":false}"#;
    const ECHO: &str = r#"{"id":"1700000000000-message","role":"user","content":"today"}"#;
    const A1: &str = r#"{"id":"a1","role":"assistant","content":"Rev","isDelta":true}"#;
    const A2: &str = r#"{"id":"a2","role":"assistant","content":"enue","isDelta":true}"#;
    const A3: &str = r#"{"id":"a3","role":"assistant","content":" rose","isDelta":true}"#;
    const SUSPENDED: &str = r#"{"id":"__suspended__","messageId":"1700000000000-message"}"#;
    const USAGE: &str = r#"{"id":"__usage__","usage":{}}"#;

    #[test]
    fn a_turn_replayed_before_the_cutoff_is_not_taken_twice() {
        let first = [OLD_Q, CUTOFF, ECHO, A1, SUSPENDED, USAGE];
        assert_eq!(
            taken_after(&first, &[OLD_Q, OLD_A, ECHO, A1, CUTOFF, A2, A3, USAGE]),
            ["a2", "a3", "__usage__"]
        );
        // Lines the service sent while the client was away are in the
        // replay, and new to the turn.
        assert_eq!(taken_after(&first, &[OLD_Q, ECHO, A1, A2, CUTOFF, A3]), ["a2", "a3"]);
    }

    #[test]
    fn a_turn_replayed_after_the_cutoff_is_counted_off() {
        let first = [CUTOFF, ECHO, A1, A2];
        assert_eq!(taken_after(&first, &[OLD_Q, CUTOFF, ECHO, A1, A2, A3]), ["a3"]);
    }

    #[test]
    fn a_turn_not_replayed_is_all_new_after_the_cutoff() {
        let first = [CUTOFF, ECHO, A1];
        assert_eq!(taken_after(&first, &[OLD_Q, OLD_A, CUTOFF, A2, A3]), ["a2", "a3"]);
        // The echo read is the echo, whatever its id.
        let other_echo = r#"{"id":"u-9","role":"user","content":"today"}"#;
        assert_eq!(
            taken_after(&[CUTOFF, other_echo, A1], &[other_echo, A1, CUTOFF, A2]),
            ["a2"]
        );
    }
}
