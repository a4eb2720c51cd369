//! A turn of one of Cube's eval questions graded as Cube grades it: the
//! agent's last SQL result (every row of it, when the stream may lack
//! some) against the ground truth's, into the run's [`CubeGrade`].

use super::case::failed;
use super::Run;
use crate::error::{Fault, Kind};
use crate::evals::grade::{grade, CubeGrade, Reason, Sheet, Verdict};
use crate::evals::report::RunReport;
use crate::evals::suite::GroundTruth;
use crate::render::markdown;
use crate::results::SqlResult;

impl Run<'_> {
    /// Grades a turn of one of Cube's eval questions as Cube does, into
    /// the run's [`CubeGrade`]: `failure`: why the turn failed, if it did;
    /// `last`: the agent's last SQL result. A failure of the whole run
    /// (credentials, an unreachable service, a signal, `--timeout`) keeps
    /// its own code; any other verdict but `pass` fails the run (exit 9):
    /// `error` as an error of the case, `fail` and `review` as a failure.
    pub(super) fn grade_turn(
        &self,
        case: usize,
        truth: &GroundTruth,
        failure: Option<Fault>,
        last: Option<SqlResult>,
        run: &mut RunReport,
    ) -> Result<(), Fault> {
        if let Some(fault) = &failure {
            let kind = fault.kind;
            if !matches!(kind, Kind::BadStream | Kind::Timeout | Kind::ToolError) || self.ends_the_run(kind) {
                return Err(fault.clone());
            }
        }
        let agent_sql = last.as_ref().and_then(|result| result.sql.clone());
        let grade = self.cube_grade(case, truth, failure, last, run.answer.as_deref())?;
        run.cube = CubeGrade {
            ground_truth: match truth {
                GroundTruth::Sql(sql) => Some(sql.clone()),
                GroundTruth::NotFound(_) => None,
            },
            agent_sql,
            ..grade.unwrap_or(CubeGrade {
                verdict: Some(Verdict::Pass),
                ..CubeGrade::default()
            })
        };
        run.comparison = run.cube.comparison.take();
        let analysis = run.cube.analysis.clone().unwrap_or_default();
        let line = match run.cube.score_reason {
            Some(reason) => format!("{}: {analysis}", reason.as_str()),
            None => format!("review: {analysis}"),
        };
        // Cube's `error` is an error of the question, not a failed answer:
        // counted among the errors, its exit code still the verdict's (9).
        match run.cube.verdict {
            Some(Verdict::Pass) => Ok(()),
            Some(Verdict::Error) => Err(Fault::new(Kind::Expectation, line)),
            _ => Err(failed(run, vec![line])),
        }
    }

    /// Cube's grade of a turn when it does not pass; `None` when it does
    /// (`answer`: the agent's final answer). `Err` for a failure of the
    /// whole run on the way.
    fn cube_grade(
        &self,
        case: usize,
        truth: &GroundTruth,
        failure: Option<Fault>,
        last: Option<SqlResult>,
        answer: Option<&str>,
    ) -> Result<Option<CubeGrade>, Fault> {
        if let Some(fault) = failure {
            return Ok(Some(CubeGrade::missed(Reason::AgentError, fault.to_string())));
        }
        let sql = match truth {
            GroundTruth::Sql(sql) => sql,
            GroundTruth::NotFound(name) => {
                return Ok(Some(CubeGrade::missed(
                    Reason::GroundTruthNotFound,
                    format!("no certified query is named {name:?}"),
                )))
            }
        };
        let Some(result) = last else {
            return Ok(Some(CubeGrade::review(match answer.is_some_and(markdown::has_table) {
                true => "the agent ran no query: it put its results inline, as a Markdown table in its answer (as agents on Cube's chassis runtime do); nothing to compare",
                false => "the agent ran no query: nothing to compare",
            })));
        };
        if let Some(error) = &result.error {
            return Ok(Some(CubeGrade::missed(
                Reason::QueryError,
                format!("the agent's query failed: {error}"),
            )));
        }
        let agent = match self.agent_sheet(&result) {
            Ok(sheet) => sheet,
            Err(fault) if fault.kind == Kind::Timeout || self.ends_the_run(fault.kind) => {
                return Err(self.data_failure(fault))
            }
            Err(fault) => {
                return Ok(Some(CubeGrade::missed(
                    Reason::QueryError,
                    format!("the rest of the agent's truncated result could not be fetched: {fault}"),
                )))
            }
        };
        let truth = match self.references.truth(case, sql) {
            Ok(truth) => truth,
            Err(fault) if fault.kind == Kind::Timeout || self.ends_the_run(fault.kind) => {
                return Err(self.data_failure(fault))
            }
            Err(fault) => {
                return Ok(Some(CubeGrade::missed(
                    Reason::GroundTruthQueryFailed,
                    format!("the ground truth's SQL failed: {fault}"),
                )))
            }
        };
        grade(&agent, truth, self.deadline).map_err(|_| {
            self.ends_all(Fault::new(
                Kind::Timeout,
                "the --timeout of the whole run expired while grading",
            ))
        })
    }

    /// The agent's result as graded: its rows from the stream, or every
    /// row of its query from the data query API when it may lack some.
    fn agent_sheet(&self, result: &SqlResult) -> Result<Sheet, Fault> {
        let failure = |err: anyhow::Error| Fault::of(&err);
        if !result.may_lack_rows() {
            return Sheet::of_result(result).map_err(failure);
        }
        let Some(data) = self.references.data() else {
            return Err(Fault::new(Kind::Usage, "no data query API to fetch them with"));
        };
        let mut sheet = Sheet::default();
        result.fetch_all(data, &mut sheet).map_err(failure)?;
        Ok(sheet)
    }
}
