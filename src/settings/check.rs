//! What `check` and `check --list` receive: the suite and which of its
//! cases run, and for a run the chat, the data query API and the history.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use super::checks::{regex, variable};
use super::profile::Config;
use super::types::{
    case_overrides, report_settings, Answers, CheckListSettings, CheckSettings, ReportFormat, Selection,
};
use super::{history, Sources};
use crate::api::chat::ChatSettings;
use crate::ci::CiJob;
use crate::cli::{var, CheckArgs};
use crate::error::usage;
use crate::evals::budget::BudgetLimits;
use crate::evals::shard::parse_shard;

impl Sources<'_> {
    /// The suite of `check` and which of its cases run.
    fn selection(&self, args: &mut CheckArgs, timeout: Option<Duration>) -> Result<Selection> {
        let shard = args
            .shard
            .as_deref()
            .map(|text| parse_shard(text).map_err(|err| usage(format!("--shard: {err}"))))
            .transpose()?;
        Ok(Selection {
            suite: args
                .suite
                .take()
                .ok_or_else(|| usage("check what? give a SUITE file"))?,
            agents_path: variable(var::CUBE_AGENTS_PATH).map(PathBuf::from),
            certified: args.certified,
            filter: args
                .filter
                .as_deref()
                .map(|pattern| regex(pattern, "--filter"))
                .transpose()?,
            shard,
            timeout,
        })
    }

    /// `check --list`: no URL, credential or data API is needed, and no
    /// identity (cases are listed as a run would ask them).
    pub(super) fn check_list(&self, mut args: CheckArgs) -> Result<CheckListSettings> {
        let network = self.network(&args.network)?;
        let mut identity = self.identity(&args.identity, network.limits.timeout)?;
        if identity.external_id.is_none() && identity.internal_id.is_none() {
            // Only the suite's own identity fields are checked.
            identity.external_id = Some("analyst-list".to_string());
        }
        let selection = self.selection(&mut args, network.limits.timeout)?;
        let report = report_settings(args.report)?;
        if !matches!(report.format, None | Some(ReportFormat::Json)) {
            return Err(usage("--list prints one case a line, or with -o json an array"));
        }
        Ok(CheckListSettings {
            selection,
            identity,
            report,
        })
    }

    pub(super) fn check(&self, mut args: CheckArgs) -> Result<CheckSettings> {
        let network = self.network(&args.network)?;
        let identity = self.identity(&args.identity, network.limits.timeout)?;
        // A re-grade asks nothing: no chat URL or key is needed.
        let answers = match args.regrade.take() {
            Some(dir) => Answers::Saved(dir),
            None => {
                let url = self.chat_url(&args.endpoint)?;
                let (key, cube_token) = self.chat_credentials(&url, &args.endpoint, network.limits.timeout)?;
                Answers::Asked(Box::new(ChatSettings {
                    url,
                    key,
                    cube_token,
                    identity: None,
                }))
            }
        };
        let data = self.data(&args.data, identity.security_context.clone(), network.limits.timeout);
        let prices = self.config.map(Config::prices).unwrap_or_default();
        if args.budget_usd.is_some() && prices.is_empty() {
            return Err(usage(
                "--budget-usd counts dollars at the config file's [prices], and it has none: add [prices.\"MODEL\"] (see 'analyst config --help'), or use --budget-tokens",
            ));
        }
        Ok(CheckSettings {
            selection: self.selection(&mut args, network.limits.timeout)?,
            jobs: usize::from(args.jobs),
            overrides: case_overrides(&args.cases),
            recording: history::recording(args.no_history, self.profile)?,
            report: report_settings(args.report)?,
            save: args.save,
            budget: BudgetLimits {
                tokens: args.budget_tokens,
                usd: args.budget_usd,
            },
            answers,
            identity,
            data,
            network,
            ci: CiJob::from_vars(variable),
            stop_when_decided: args.stop_when_decided,
            retry_errors: args.retry_errors,
            prices,
            otlp: self.otlp(),
        })
    }
}
