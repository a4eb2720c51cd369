//! What `analyst doctor` checks and `analyst config list` shows: every
//! setting resolved as the commands would resolve it, each problem a
//! finding rather than the end, with where each value came from; secrets
//! as set or unset, never their value.

use anyhow::Result;
use reqwest::Url;

use super::checks::{variable, Finding, FindingState};
use super::profile::Config;
use super::secrets::Secrets;
use super::types::DoctorSettings;
use super::{security_context, SessionSettings, Sources};
use crate::cli::{var, DoctorArgs, TableOrJson};
use crate::error::{kind_of, usage, Fault};

impl Sources<'_> {
    /// `analyst config list`: each setting the chosen profile and the
    /// environment give, with where it came from; secrets as set or unset.
    pub(super) fn config_list(&self) -> Vec<Finding> {
        let mut rows = vec![Config::finding(self.config, self.profile)];
        let deployment = self.profile.and_then(|p| p.deployment_id.map(|id| id.to_string()));
        let settings: [(&str, &str, &str, Option<String>); 9] = [
            ("chat URL", var::CHAT_URL, "chat_url", None),
            ("account URL", var::BASE_URL, "base_url", None),
            ("deployment id", var::DEPLOYMENT_ID, "deployment_id", deployment),
            ("data URL", var::DATA_URL, "data_url", None),
            ("external id", var::EXTERNAL_ID, "external_id", None),
            ("internal id", var::INTERNAL_ID, "internal_id", None),
            ("email", "", "email", None),
            ("time zone", var::TIMEZONE, "", None),
            ("timeout", var::TIMEOUT, "", None),
        ];
        for (what, name, key, profile_value) in settings {
            let from_profile = self
                .profile
                .and_then(|p| Some((profile_value.or_else(|| p.key(key).cloned())?, p.origin(key))));
            let found = variable(name).map(|value| (value, name.to_string())).or(from_profile);
            rows.push(match found {
                Some((value, from)) => Finding::new(what, FindingState::Ok, value, from),
                None => Finding::new(what, FindingState::Unset, "unset", ""),
            });
        }
        rows.extend(
            Secrets::find(
                self.file_flag("api_key_file", None),
                self.file_flag("cube_token_file", None),
                self.profile,
            )
            .findings(),
        );
        rows.extend(super::history::findings(self.profile));
        rows.extend(super::otel::findings(self.config, self.profile));
        rows
    }

    /// `analyst doctor`: every setting checked as the commands would check
    /// it, each failure a finding rather than the end (a broken config file
    /// is `config_problem`); what the endpoints need, to call them; the
    /// table fits `width`. A bad timeout or retry count is a usage error.
    pub(super) fn doctor(
        &self,
        args: DoctorArgs,
        config_problem: Option<anyhow::Error>,
        width: Option<u16>,
    ) -> Result<DoctorSettings> {
        let network = self.network(&args.network)?;
        let mut findings = vec![match config_problem {
            Some(err) => Finding::new(
                "config file",
                FindingState::Failed(kind_of(&err)),
                format!("{err:#}"),
                "",
            ),
            None => Config::finding(self.config, self.profile),
        }];
        // The chat API: its URL, its credential, who asks.
        let url = self.chat_url(&args.endpoint);
        findings.push(Finding::of(
            "chat URL",
            &url,
            |url| {
                let kind = if url.path().contains("/deployments/") {
                    "deployment"
                } else {
                    "agent"
                };
                format!("{url} (an {kind} URL)")
            },
            &self.origin("chat_url", "--chat-url", var::CHAT_URL, "chat_url"),
        ));
        let identity = self.identity(&args.identity, network.limits.timeout);
        let ids_from = identity.as_ref().map_or(String::new(), |identity| {
            match (&identity.external_id, &identity.internal_id) {
                (Some(_), _) => identity.names.external_id.clone(),
                (None, Some(_)) => identity.names.internal_id.clone(),
                (None, None) => String::new(),
            }
        });
        let secrets = self.secrets(
            &args.endpoint.key.api_key_file,
            &args.endpoint.cube_token_file,
            network.limits.timeout,
        );
        let credential_from: Vec<String> = [&secrets.api_key, &secrets.cube_token]
            .into_iter()
            .flatten()
            .map(|source| source.origin())
            .collect();
        let chat = match (&url, &identity) {
            (Ok(_), Ok(identity)) => Some(self.chat(&args.endpoint, identity, network.limits.timeout)),
            _ => None,
        };
        if let Some(chat) = &chat {
            let credential = chat.as_ref().map(|chat| match (&chat.key, &chat.cube_token) {
                (Some(_), Some(_)) => "an API key and a Cube token (the key is used): set",
                (Some(_), None) => "an API key: set",
                _ => "a Cube token: set",
            });
            let credential = credential.map_err(|err| Fault::new(kind_of(err), format!("{err:#}")).into());
            findings.push(Finding::of(
                "chat credential",
                &credential,
                |what| what.to_string(),
                &credential_from.join(", "),
            ));
        }
        let who: Result<String> = match (&chat, &identity) {
            (Some(Ok(chat)), _) => Ok(chat
                .identity
                .as_ref()
                .map_or_else(|| "the Cube token's user".to_string(), SessionSettings::summary)),
            (_, Ok(identity)) => identity.validate().map(|settings| settings.summary()),
            (_, Err(err)) => Err(usage(format!("{err:#}"))),
        };
        findings.push(Finding::of("identity", &who, String::clone, &ids_from));
        let chat = chat.and_then(Result::ok);
        // The data query API.
        let data = match security_context(args.identity.security_context.as_deref(), network.limits.timeout) {
            Ok(context) => self.data(&args.data, context, network.limits.timeout),
            Err(_) => self.data(&args.data, None, network.limits.timeout),
        };
        let data_ready = match self.setting(args.data.data_url.clone(), "data_url") {
            None => {
                findings.push(Finding::new(
                    "data query API",
                    FindingState::Unset,
                    "not set (rows, --all-rows and reference_sql need it)",
                    "",
                ));
                false
            }
            Some(_) => {
                let checked = data.check().and_then(|()| data.url().map(|url| url.to_string()));
                findings.push(Finding::of(
                    "data query API",
                    &checked,
                    String::clone,
                    &self.origin("data_url", "--data-url", var::DATA_URL, "data_url"),
                ));
                checked.is_ok()
            }
        };
        findings.extend(super::history::findings(self.profile));
        findings.extend(super::otel::findings(self.config, self.profile));
        // The account host, for the embed endpoints.
        let account = match self.setting(args.base_url.clone(), "base_url") {
            None => {
                findings.push(Finding::new(
                    "account host",
                    FindingState::Unset,
                    "not set (session needs it)",
                    "",
                ));
                None
            }
            Some(_) => {
                let base = self.base_url(args.base_url.clone());
                let from = self.origin("base_url", "--base-url", var::BASE_URL, "base_url");
                findings.push(Finding::of("account host", &base, Url::to_string, &from));
                match (base, &secrets.api_key) {
                    (Ok(base), Some(key)) => key.read().ok().map(|key| (base, key)),
                    _ => None,
                }
            }
        };
        Ok(DoctorSettings {
            findings,
            chat,
            data: data_ready.then_some(data),
            account,
            offline: args.offline,
            network,
            json: args.output == TableOrJson::Json,
            width,
            otlp: super::otel::resolve(self.config, self.profile).ok().flatten(),
        })
    }
}
