//! The network and the things that interrupt it: [`http`] (the client,
//! status → failure kind, retries of safe calls), [`source`] (a stream read
//! on a worker thread so that [`signals`], `--timeout` and stalls are
//! noticed), [`input`] (what a command is given to read, bounded alike).

pub mod http;
pub mod input;
pub mod signals;
pub mod source;
