//! The stream pipeline: [`lines`] cuts bytes into lines, [`message`] types
//! each line (serde, borrowed fields; [`quick`] reads the common line
//! without it), [`transcript`] folds the messages
//! into what outputs need, and [`turn`] reads one turn through them into a
//! renderer; [`resume`] tells which lines of a resumed connection the turn
//! already read.

pub mod lines;
pub mod message;
pub mod parse;
pub mod quick;
pub mod resume;
pub mod transcript;
pub mod turn;
