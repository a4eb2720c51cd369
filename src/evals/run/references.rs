//! What the cases of a run compare their answers with: the rows of a
//! `reference_sql` and the ground truths of Cube's eval questions, each run
//! through the data query API by the first run of its case that needs it
//! and kept for the others — or why it could not be had, as a [`Fault`].

use std::sync::OnceLock;

use crate::api::data::DataClient;
use crate::error::{Fault, Kind};
use crate::evals::grade::Sheet;
use crate::results::{Collected, RowSink, RowSource};

/// The rows each case compares with, fetched once.
pub(super) struct References {
    /// The data query API, when one is set up.
    data: Option<DataClient>,
    /// Each case's `reference_sql` rows, fetched by its first run to need them.
    rows: Vec<OnceLock<Result<Collected, Fault>>>,
    /// Each case's ground truth, fetched by its first run to need it.
    truths: Vec<OnceLock<Result<Sheet, Fault>>>,
}

impl References {
    /// The references of `cases` cases, fetched through `data`.
    pub(super) fn new(data: Option<DataClient>, cases: usize) -> References {
        References {
            data,
            rows: (0..cases).map(|_| OnceLock::new()).collect(),
            truths: (0..cases).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The data query API, when one is set up (for the rest of a
    /// truncated result).
    pub(super) fn data(&self) -> Option<&DataClient> {
        self.data.as_ref()
    }

    /// The rows of case `case`'s `reference_sql` (`sql`).
    pub(super) fn rows(&self, case: usize, sql: &str) -> Result<&Collected, Fault> {
        self.fetched(&self.rows[case], sql)
    }

    /// The ground truth of case `case` (its SQL, `sql`), as graded.
    pub(super) fn truth(&self, case: usize, sql: &str) -> Result<&Sheet, Fault> {
        self.fetched(&self.truths[case], sql)
    }

    /// The rows of `sql` into a `T`, run by the first run to need them and
    /// kept in `cell` for the others.
    fn fetched<'c, T: RowSink + Default>(
        &self,
        cell: &'c OnceLock<Result<T, Fault>>,
        sql: &str,
    ) -> Result<&'c T, Fault> {
        let fetched = cell.get_or_init(|| {
            let Some(data) = &self.data else {
                return Err(Fault::new(Kind::Usage, "it needs the data query API"));
            };
            let mut rows = T::default();
            data.fetch(sql, None, &mut rows)
                .map(|_| rows)
                .map_err(|err| Fault::of(&err))
        });
        fetched.as_ref().map_err(Clone::clone)
    }
}
