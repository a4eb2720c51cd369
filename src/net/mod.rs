//! The network and the things that interrupt it: [`http`] (the client,
//! status → failure kind, retries of safe calls), [`source`] (a stream read
//! on a worker thread so that signals, `--timeout` and stalls are
//! noticed).

pub mod http;
pub mod source;
