//! The service's APIs on the wire, and nothing else: [`chat`] (start a
//! turn, abort a chat), [`data`] (the data query API: token, polling, the
//! NDJSON answer), [`session`] (generate-session).

pub mod chat;
pub mod data;
pub mod session;
