//! Where spans go, from OpenTelemetry's standard variables (or the
//! profile's `otlp_endpoint`): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as
//! given, else `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`, its
//! headers (secrets), protocol, timeout, service name and resource
//! attributes, and the conventions' switch for content.

use std::time::Duration;

use anyhow::Result;
use url::Url;

use super::checks::{variable, Finding, FindingState};
use super::profile::{Config, Profile};
use crate::ci::CiJob;
use crate::cli::var;
use crate::error::usage;
use crate::otel::OtlpSettings;
use crate::redact::{register_secret, Secret};

/// The most an export may take unless `OTEL_EXPORTER_OTLP_TIMEOUT` says
/// otherwise: a command waits this long for its collector at most.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The endpoint, and where it came from; `None` when spans are not sent
/// (no endpoint, or `OTEL_SDK_DISABLED=true`).
fn endpoint(profile: Option<&Profile>) -> Result<Option<(Url, String)>> {
    if variable(var::OTEL_SDK_DISABLED).is_some_and(|value| value.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    let parse = |text: &str, origin: &str| {
        Url::parse(text)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| usage(format!("{origin}: {text:?} is not an http(s) URL")))
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
/// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES` are).
fn pairs(text: &str, name: &str) -> Result<Vec<(String, String)>> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| usage(format!("{name}: {:?} is not key=value", pair.trim())))?;
            let value = percent_decode(value.trim());
            Ok((key.trim().to_string(), value))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

impl super::Sources<'_> {
    /// Where spans go (`OTEL_*`, the profile's `otlp_endpoint`), with the
    /// CI job as resource attributes.
    pub(super) fn otlp(&self) -> Result<Option<OtlpSettings>> {
        resolve(self.config, self.profile)
    }
}

/// Where spans go, with the CI job as resource attributes; `None` when
/// they are not sent.
pub(super) fn resolve(config: Option<&Config>, profile: Option<&Profile>) -> Result<Option<OtlpSettings>> {
    otlp(config, profile, CiJob::from_vars(variable).as_ref())
}

/// What `OTEL_*` and the profile say of spans; `None` when none are sent.
fn otlp(config: Option<&Config>, profile: Option<&Profile>, ci: Option<&CiJob>) -> Result<Option<OtlpSettings>> {
    let Some((endpoint, _)) = endpoint(profile)? else {
        return Ok(None);
    };
    let headers = match variable(var::OTEL_HEADERS) {
        Some(text) => pairs(&text, var::OTEL_HEADERS)?
            .into_iter()
            .map(|(name, value)| {
                register_secret(&value);
                (name, Secret::new(value, var::OTEL_HEADERS))
            })
            .collect(),
        None => Vec::new(),
    };
    let json = match variable(var::OTEL_PROTOCOL).as_deref() {
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
        Some(text) => Duration::from_millis(
            text.trim()
                .parse::<u64>()
                .map_err(|_| usage(format!("{}: {text:?} is not milliseconds", var::OTEL_TIMEOUT)))?,
        ),
        None => DEFAULT_TIMEOUT,
    };
    let mut resource = match variable(var::OTEL_RESOURCE_ATTRIBUTES) {
        Some(text) => pairs(&text, var::OTEL_RESOURCE_ATTRIBUTES)?,
        None => Vec::new(),
    };
    if let Some(ci) = ci {
        resource.extend(ci.resource_attributes());
    }
    Ok(Some(OtlpSettings {
        endpoint,
        headers,
        json,
        timeout,
        service_name: variable(var::OTEL_SERVICE_NAME).unwrap_or_else(|| "analyst".into()),
        resource,
        capture_content: variable(var::OTEL_CAPTURE_CONTENT).is_some_and(|value| value.eq_ignore_ascii_case("true")),
        prices: config.map(Config::prices).unwrap_or_default(),
    }))
}

/// The endpoint as `config list` and `doctor` show it.
pub(super) fn finding(profile: Option<&Profile>) -> Finding {
    match endpoint(profile) {
        Ok(Some((url, origin))) => Finding::new("otlp endpoint", FindingState::Ok, url.as_str(), origin),
        Ok(None) => Finding::new("otlp endpoint", FindingState::Unset, "no spans are sent", ""),
        Err(err) => Finding::new(
            "otlp endpoint",
            FindingState::Failed(crate::error::kind_of(&err)),
            err.to_string(),
            "",
        ),
    }
}
