//! A runner's stdout read by a thread of its own, at most every [`READ_PACE`]: the lines a
//! runner writes meanwhile (a sample every few milliseconds) come over in one chunk, so the
//! front end wakes once per chunk. A pipe read through the runtime's reactor wakes its thread
//! at every write of the runner, whether or not anything reads it then: hundreds of wake-ups
//! a second on a machine that is measuring.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// The least time between two reads of the pipe, unless the last one filled the buffer.
/// What the runner says still shows within a frame.
pub const READ_PACE: Duration = Duration::from_millis(100);
const CHUNK: usize = 64 << 10;

pub struct PacedPipe {
    chunks: mpsc::UnboundedReceiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
}

impl PacedPipe {
    /// Starts the thread reading `stdout` (the pipe is taken off the reactor, blocking). The
    /// thread ends when the pipe ends (every process holding it gone) or nothing reads on.
    pub fn read(stdout: tokio::process::ChildStdout) -> std::io::Result<PacedPipe> {
        let mut pipe = std::fs::File::from(stdout.into_owned_fd()?);
        let (tx, chunks) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("runner-stdout".into())
            .spawn(move || {
                let mut buf = vec![0u8; CHUNK];
                loop {
                    let n = match pipe.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    if tx.send(Ok(buf[..n].to_vec())).is_err() {
                        return;
                    }
                    if n < CHUNK {
                        std::thread::sleep(READ_PACE);
                    }
                }
            })?;
        Ok(PacedPipe {
            chunks,
            chunk: Vec::new(),
            at: 0,
        })
    }
}

impl AsyncRead for PacedPipe {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = &mut *self;
        if me.at == me.chunk.len() {
            match ready!(me.chunks.poll_recv(cx)) {
                // The pipe ended: end of file.
                None => return Poll::Ready(Ok(())),
                Some(Err(e)) => return Poll::Ready(Err(e)),
                Some(Ok(chunk)) => {
                    me.chunk = chunk;
                    me.at = 0;
                }
            }
        }
        let n = out.remaining().min(me.chunk.len() - me.at);
        out.put_slice(&me.chunk[me.at..me.at + n]);
        me.at += n;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// What a child writes arrives whole and in order, and its end is the end of file.
    #[tokio::test]
    async fn a_childs_output_arrives_whole_and_in_order() {
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg("for i in $(seq 1 200); do echo line $i; done; sleep 0.3; echo last")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = PacedPipe::read(child.stdout.take().unwrap()).unwrap();
        let mut text = String::new();
        pipe.read_to_string(&mut text).await.unwrap();
        let want: String = (1..=200).map(|i| format!("line {i}\n")).collect::<String>() + "last\n";
        assert_eq!(text, want);
        child.wait().await.unwrap();
    }
}
