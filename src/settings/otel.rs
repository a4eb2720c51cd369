//! Where spans go, from OpenTelemetry's standard variables (or the
//! profile's `otlp_endpoint`): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as
//! given, else `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`, its
//! headers (secrets), protocol, timeout, service name and resource
//! attributes, and the conventions' switch for content.
//!
//! A value the exporter cannot use turns the export off for `ask`,
//! `check` and `rows`, with one warning, and the command runs; `doctor`
//! fails that check, and `history push` (whose only job is to send) stops.
//! No message quotes a header or a credential in the endpoint.

use std::time::Duration;

use anyhow::Result;
use url::Url;

use super::checks::{percent_decode, variable, Finding, FindingState};
use super::profile::{Config, Profile};
use crate::ci::CiJob;
use crate::cli::var;
use crate::domain::{is_loopback, without_credentials};
use crate::error::usage;
use crate::redact::Secret;
use crate::telemetry::OtlpSettings;

/// The most an export may take unless `OTEL_EXPORTER_OTLP_TIMEOUT` says
/// otherwise: a command waits this long for its collector at most.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The endpoint, and where it came from; `None` when spans are not sent
/// (no endpoint, or `OTEL_SDK_DISABLED=true`). Credentials in it are
/// never shown (the registry redacts them too).
fn endpoint(profile: Option<&Profile>) -> Result<Option<(Url, String)>> {
    if variable(var::OTEL_SDK_DISABLED).is_some_and(|value| value.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    let parse = |text: &str, origin: &str| {
        Url::parse(text)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| {
                usage(format!(
                    "{origin}: {:?} is not an http(s) URL",
                    without_credentials(text)
                ))
            })
    };
    if let Some(text) = variable(var::OTEL_TRACES_ENDPOINT) {
        return Ok(Some((
            parse(&text, var::OTEL_TRACES_ENDPOINT)?,
            var::OTEL_TRACES_ENDPOINT.into(),
        )));
    }
    let (base, origin) = match (variable(var::OTEL_ENDPOINT), profile) {
        (Some(text), _) => (text, var::OTEL_ENDPOINT.to_string()),
        (None, Some(profile)) => match &profile.otlp_endpoint {
            Some(text) => (text.clone(), profile.origin("otlp_endpoint")),
            None => return Ok(None),
        },
        (None, None) => return Ok(None),
    };
    // The base endpoint takes the signal's path, as the specification says.
    let joined = format!("{}/v1/traces", base.trim_end_matches('/'));
    Ok(Some((parse(&joined, &origin)?, origin)))
}

/// `key=value,key=value`, each value percent-decoded (W3C baggage form, as
/// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES` are). An
/// entry that is not `key=value` is named by its place; only when the
/// values are not `secret` is it quoted.
fn pairs(text: &str, name: &str, secret: bool) -> Result<Vec<(String, String)>> {
    let entries: Vec<&str> = text.split(',').filter(|pair| !pair.trim().is_empty()).collect();
    entries
        .iter()
        .enumerate()
        .map(|(at, pair)| {
            let malformed = || match secret {
                true => usage(format!(
                    "{name}: entry {} of {} is not key=value (not shown: it may hold a secret; a comma inside a value is written %2C)",
                    at + 1,
                    entries.len()
                )),
                false => usage(format!("{name}: {:?} is not key=value", pair.trim())),
            };
            let (key, value) = pair.split_once('=').ok_or_else(malformed)?;
            let key = key.trim();
            if key.is_empty() || (secret && reqwest::header::HeaderName::from_bytes(key.as_bytes()).is_err()) {
                return Err(malformed());
            }
            Ok((key.to_string(), percent_decode(value.trim())))
        })
        .collect()
}

impl super::Sources<'_> {
    /// Where `ask`, `check` and `rows` send spans (`OTEL_*`, the profile's
    /// `otlp_endpoint`), with the CI job as resource attributes; `None`
    /// when they are not sent — also when a value cannot be used: then
    /// one warning says which, and the command runs.
    pub(super) fn otlp(&self) -> Option<OtlpSettings> {
        match resolve(self.config, self.profile) {
            Ok(settings) => settings,
            Err(err) => {
                self.notes.warn(&format!("{err:#}; no spans are sent"));
                None
            }
        }
    }
}

/// Where spans go, with the CI job as resource attributes; `None` when
/// they are not sent; `Err` for a value the exporter cannot use.
pub(super) fn resolve(config: Option<&Config>, profile: Option<&Profile>) -> Result<Option<OtlpSettings>> {
    otlp(config, profile, CiJob::from_vars(variable).as_ref())
}

/// What `OTEL_*` and the profile say of spans; `None` when none are sent.
fn otlp(config: Option<&Config>, profile: Option<&Profile>, ci: Option<&CiJob>) -> Result<Option<OtlpSettings>> {
    let Some((endpoint, origin)) = endpoint(profile)? else {
        return Ok(None);
    };
    let headers: Vec<(String, Secret)> = match variable(var::OTEL_HEADERS) {
        Some(text) => pairs(&text, var::OTEL_HEADERS, true)?
            .into_iter()
            .map(|(name, value)| (name, Secret::new(value, var::OTEL_HEADERS)))
            .collect(),
        None => Vec::new(),
    };
    let secret_in_url = !endpoint.username().is_empty() || endpoint.password().is_some();
    if endpoint.scheme() == "http" && !is_loopback(&endpoint) && (secret_in_url || !headers.is_empty()) {
        return Err(usage(format!(
            "{origin}: refusing to send the collector's credentials over plain http:// to {}: use https:// (plain http goes to a collector only without secret headers, and never through a proxy)",
            endpoint.host_str().unwrap_or("?")
        )));
    }
    let json = match variable(var::OTEL_PROTOCOL).as_deref().map(str::trim) {
        None | Some("http/protobuf") => false,
        Some("http/json") => true,
        Some(other) => {
            return Err(usage(format!(
                "{}: {other:?} is not http/protobuf or http/json (grpc is not sent)",
                var::OTEL_PROTOCOL
            )))
        }
    };
    let timeout = match variable(var::OTEL_TIMEOUT) {
        Some(text) => Duration::from_millis(text.trim().parse::<u64>().map_err(|_| {
            usage(format!(
                "{}: {text:?} is not milliseconds (a whole number, e.g. 10000)",
                var::OTEL_TIMEOUT
            ))
        })?),
        None => DEFAULT_TIMEOUT,
    };
    let mut resource = match variable(var::OTEL_RESOURCE_ATTRIBUTES) {
        Some(text) => pairs(&text, var::OTEL_RESOURCE_ATTRIBUTES, false)?,
        None => Vec::new(),
    };
    // OTEL_SERVICE_NAME wins over a service.name among the attributes.
    let service_name = variable(var::OTEL_SERVICE_NAME)
        .or_else(|| {
            resource
                .iter()
                .find(|(key, _)| key == "service.name")
                .map(|(_, value)| value.clone())
        })
        .unwrap_or_else(|| "analyst".into());
    resource.retain(|(key, _)| key != "service.name");
    if let Some(ci) = ci {
        resource.extend(ci.resource_attributes());
    }
    Ok(Some(OtlpSettings {
        endpoint,
        headers,
        json,
        timeout,
        service_name,
        resource,
        capture_content: variable(var::OTEL_CAPTURE_CONTENT).is_some_and(|value| value.eq_ignore_ascii_case("true")),
        prices: config.map(Config::prices).unwrap_or_default(),
    }))
}

/// The export as `config list` and `doctor` show it: the endpoint (without
/// its credentials), failed when a value cannot be used; and whether the
/// collector's headers are set (never their values).
pub(super) fn findings(config: Option<&Config>, profile: Option<&Profile>) -> Vec<Finding> {
    let endpoint = match (endpoint(profile), resolve(config, profile)) {
        (Ok(Some((url, origin))), Ok(_)) => Finding::new(
            "otlp endpoint",
            FindingState::Ok,
            without_credentials(url.as_str()),
            origin,
        ),
        (Ok(None), _) => Finding::new("otlp endpoint", FindingState::Unset, "no spans are sent", ""),
        (Err(err), _) | (_, Err(err)) => Finding::new(
            "otlp endpoint",
            FindingState::Failed(crate::error::kind_of(&err)),
            format!("{err:#}; no spans are sent"),
            "",
        ),
    };
    let headers = match variable(var::OTEL_HEADERS) {
        Some(_) => Finding::new("otlp headers", FindingState::Ok, "set", var::OTEL_HEADERS),
        None => Finding::new("otlp headers", FindingState::Unset, "unset", ""),
    };
    vec![endpoint, headers]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_header_list_is_named_never_quoted() {
        for text in [
            "authorization: Bearer sk-hdr-2f9a",
            "a=1,authorization=Bearer sk,hdr-2f9a",
        ] {
            let err = pairs(text, var::OTEL_HEADERS, true).unwrap_err().to_string();
            assert!(!err.contains("sk") && !err.contains("Bearer"), "{err}");
            assert!(err.contains("entry "), "{err}");
        }
        assert_eq!(
            pairs("authorization=Bearer%20k%2Cv, x-team = a ", var::OTEL_HEADERS, true).unwrap(),
            [
                ("authorization".into(), "Bearer k,v".into()),
                ("x-team".into(), "a".into())
            ]
        );
        let err = pairs("team", var::OTEL_RESOURCE_ATTRIBUTES, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"team\""), "not secret: quoted ({err})");
    }
}
