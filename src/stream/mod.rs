//! The stream pipeline: [`lines`] cuts bytes into lines, [`message`] types
//! each line (serde, borrowed fields), [`transcript`] folds the messages
//! into what outputs need, and [`turn`] reads one turn through them into a
//! renderer.

pub mod lines;
pub mod message;
pub mod transcript;
pub mod turn;
