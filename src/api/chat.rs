//! The Chat API on the wire, nothing else: the request that starts (or
//! continues) a chat, its streamed answer as a [`Source`], and the abort
//! call. The turn they serve is driven by its owner, `exchange`.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use reqwest::Url;
use serde::Serialize;
use serde_json::json;

use crate::domain::{Image, Network, Question};
use crate::error::{fail, kind_of, usage, Kind};
use crate::identity::SessionSettings;
use crate::net::http::{Credential, Http, Peer, Request, Retry};
use crate::net::source::Source;
use crate::redact::Secret;
use crate::signals::Stop;

/// What is accepted as the chat stream's content type.
const ACCEPT_STREAM: &str = "application/x-ndjson, application/json";

/// The Chat API, and who talks to it.
#[derive(Clone, Debug)]
pub struct ChatSettings {
    /// The validated chat URL (`…/chat/stream-chat-state`).
    pub url: Url,
    /// The API key (`Authorization`), when there is one.
    pub key: Option<Secret>,
    /// The Cube token (`X-Cube-Auth-Token`), when there is one.
    pub cube_token: Option<Secret>,
    /// Who asks: the `sessionSettings` object; with a Cube token and no
    /// identity flag, none (the token names the user).
    pub identity: Option<SessionSettings>,
}

impl ChatSettings {
    /// Who asks, as the history records it and keys `--thread` names (see
    /// [`crate::identity::asker`]): the user of `identity`, or of this
    /// chat's own, unless only a Cube token names the user.
    pub fn asker(&self, identity: Option<&SessionSettings>) -> String {
        let token = match &self.key {
            // The service takes the key when both are sent.
            Some(_) => None,
            None => self.cube_token.as_ref().map(Secret::expose),
        };
        crate::identity::asker(identity.or(self.identity.as_ref()), token)
    }
}

/// The chat request body (API document 2.2); unset fields are omitted.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatRequest<'a> {
    /// The question; none asks for the thread's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<&'a str>,
    /// The thread to continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<&'a str>,
    /// The question's id (or the suspended one to resume).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<&'a str>,
    /// Who asks (none when a Cube token names the user).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_settings: Option<&'a SessionSettings>,
    /// A development branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_branch_name: Option<&'a str>,
    /// Whether that branch is the default one (sent only with a branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_default_branch: Option<bool>,
    /// Images sent with the question.
    #[serde(skip_serializing_if = "<[Arc<Image>]>::is_empty")]
    pub images: &'a [Arc<Image>],
}

/// Where the chat service is and who asks: what every turn and its abort need.
#[derive(Clone)]
pub struct ChatClient {
    http: Http,
    url: Url,
    key: Option<Secret>,
    cube_token: Option<Secret>,
    identity: Option<SessionSettings>,
}

impl ChatClient {
    /// A client of the chat service `settings` names, as its user.
    pub fn new(http: Http, settings: &ChatSettings) -> Self {
        ChatClient {
            http,
            url: settings.url.clone(),
            key: settings.key.clone(),
            cube_token: settings.cube_token.clone(),
            identity: settings.identity.clone(),
        }
    }

    /// The same client asking as the user `identity`.
    pub fn as_user(&self, identity: SessionSettings) -> Self {
        ChatClient {
            identity: Some(identity),
            ..self.clone()
        }
    }

    /// What stops this client's waits and streams.
    pub fn stop(&self) -> &Stop {
        self.http.stop()
    }

    /// The credential headers of every request.
    fn credential(&self) -> Credential {
        Credential::Chat {
            key: self.key.clone(),
            cube_token: self.cube_token.clone(),
        }
    }

    /// Starts a turn: the request is sent from the source's worker, so a
    /// signal, the deadline or a stall stop it even before the answer
    /// starts. Failures before any answer are tried again as `network`
    /// allows (`--retries`): the request carries the same `messageId`.
    pub fn start(&self, question: &Question, network: Network, started: Instant) -> Result<Source> {
        let body = ChatRequest {
            input: question.input.as_deref(),
            chat_id: question.chat_id.as_deref(),
            message_id: question.message_id.as_deref(),
            session_settings: self.identity.as_ref(),
            active_branch_name: question.branch.as_deref(),
            is_default_branch: question.branch.as_ref().map(|_| question.default_branch),
            images: &question.images,
        };
        let limits = network.limits;
        let budget = limits.timeout.map(|limit| limit.saturating_sub(started.elapsed()));
        let retry = Retry::chat(network.attempts(), budget);
        let request = Request::json(
            self.url.clone(),
            Peer::Chat,
            self.credential(),
            &body,
            ACCEPT_STREAM,
            retry,
        )?;
        Ok(self.http.stream(request, limits, started))
    }

    /// Asks the service to stop `chat_id`, as this client's user, with the
    /// tries `retry` allows. 204 (or any success) is done; 403 and 404 say
    /// whose chat it is not.
    pub fn abort(&self, chat_id: &str, retry: Retry) -> Result<()> {
        self.send_abort(chat_id, retry, false)
    }

    /// The abort of a chat whose turn a stop ended (a signal, the
    /// deadline, a stall): sent within `retry`'s budget even though the
    /// stop came (see [`Request::cleanup`]).
    pub fn abort_stopped(&self, chat_id: &str, retry: Retry) -> Result<()> {
        self.send_abort(chat_id, retry, true)
    }

    /// The abort, as a cleanup after a stop or not.
    fn send_abort(&self, chat_id: &str, retry: Retry, cleanup: bool) -> Result<()> {
        let url = abort_url(&self.url)?;
        let mut body = json!({ "chatId": chat_id });
        if let Some(identity) = &self.identity {
            body["sessionSettings"] = json!(identity);
        }
        let mut request = Request::json(url, Peer::Chat, self.credential(), &body, "application/json", retry)?;
        if cleanup {
            request = request.cleaning_up();
        }
        match self.http.send(&request) {
            Ok(_) => Ok(()),
            // The status says it: the chat is someone else's. Said once.
            Err(err) if kind_of(&err) == Kind::Forbidden => Err(fail(
                Kind::Forbidden,
                format!("chat {chat_id} is not yours (403 Forbidden): give the identity that started it"),
            )),
            Err(err) => {
                let context = match kind_of(&err) {
                    Kind::NotFound => format!("chat {chat_id} was not found"),
                    _ => format!("aborting chat {chat_id}"),
                };
                Err(err).context(context)
            }
        }
    }
}

/// The abort URL of a chat URL: its last segment `stream-chat-state`
/// replaced by `abort` (API document 4.2).
pub fn abort_url(chat_url: &Url) -> Result<Url> {
    let mut url = chat_url.clone();
    let refuse = || {
        usage(format!(
            "cannot derive the abort URL from {chat_url}: a chat URL ends in /chat/stream-chat-state"
        ))
    };
    if url.path_segments().and_then(|mut segments| segments.next_back()) == Some("") {
        url.path_segments_mut().map_err(|_| refuse())?.pop();
    }
    if url.path_segments().and_then(|mut segments| segments.next_back()) != Some("stream-chat-state") {
        return Err(refuse());
    }
    url.path_segments_mut().map_err(|_| refuse())?.pop().push("abort");
    url.set_query(None);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_abort_url_replaces_the_last_segment() {
        let chat = Url::parse("https://ai.us.example.dev/api/v1/public/acme/agents/7/chat/stream-chat-state").unwrap();
        assert_eq!(
            abort_url(&chat).unwrap().as_str(),
            "https://ai.us.example.dev/api/v1/public/acme/agents/7/chat/abort"
        );
        let slash = Url::parse("https://h/x/chat/stream-chat-state/").unwrap();
        assert_eq!(abort_url(&slash).unwrap().as_str(), "https://h/x/chat/abort");
        assert!(abort_url(&Url::parse("https://h/x/chat").unwrap()).is_err());
    }
}
