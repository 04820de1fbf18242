//! Group commit across connections for plain SETs, as Redis does with one fsync per event-loop pass: every
//! connection hands its SETs to one committer task, which lets every ready connection run, takes all the SETs
//! they queued, writes them as one engine batch (one log append, one fsync under the durable sync modes) on
//! the blocking pool, and answers each connection once the batch is durable and visible. The next group
//! gathers while this one's fsync runs. A connection's other commands take the ordinary path.

use cosine_engine::Engine;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Most SETs written in one batch.
const MAX_BATCH: usize = 4096;
/// Times the committer yields to the ready connections before it writes a group.
const GATHER_ROUNDS: usize = 2;

/// A key and its stored value.
type Pair = (Vec<u8>, Vec<u8>);
/// One connection's SETs and where to send the outcome.
type Job = (Vec<Pair>, oneshot::Sender<Result<(), String>>);

/// The queue into the committer task.
pub struct Committer {
    tx: parking_lot::Mutex<Option<mpsc::UnboundedSender<Job>>>,
    rx: parking_lot::Mutex<Option<mpsc::UnboundedReceiver<Job>>>,
}

impl Default for Committer {
    fn default() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Committer {
            tx: parking_lot::Mutex::new(Some(tx)),
            rx: parking_lot::Mutex::new(Some(rx)),
        }
    }
}

impl Committer {
    /// The committer task over `engine` (spawn it once on the server's runtime; later calls return a task
    /// that ends at once). It ends when [`Committer::stop`] was called and the queue is drained.
    /// Each group is written holding `shared` shared (a transaction's EXEC holds it exclusively).
    pub fn run(
        &self,
        engine: Arc<Engine>,
        shared: Arc<parking_lot::RwLock<()>>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let rx = self.rx.lock().take();
        async move {
            if let Some(rx) = rx {
                commit_loop(engine, shared, rx).await;
            }
        }
    }

    /// Writes `pairs` in the next group; returns once they are durable as the engine's sync mode promises and
    /// visible to readers, or the engine's error.
    pub async fn write(&self, pairs: Vec<Pair>) -> Result<(), String> {
        let (reply, done) = oneshot::channel();
        let sent = match &*self.tx.lock() {
            Some(tx) => tx.send((pairs, reply)).is_ok(),
            None => false,
        };
        if !sent {
            return Err("the server is shutting down".into());
        }
        done.await
            .unwrap_or_else(|_| Err("the committer stopped".into()))
    }

    /// Stops taking writes. The task ends once its queue is empty; SETs still queued when the runtime shuts
    /// down get no reply (they were never acknowledged), and a batch already written completes.
    pub fn stop(&self) {
        self.tx.lock().take();
    }
}

async fn commit_loop(
    engine: Arc<Engine>,
    shared: Arc<parking_lot::RwLock<()>>,
    mut rx: mpsc::UnboundedReceiver<Job>,
) {
    while let Some(first) = rx.recv().await {
        let mut jobs = vec![first];
        let mut count = jobs[0].0.len();
        // let the connections that are ready run and queue their SETs, then take them all
        for _ in 0..GATHER_ROUNDS {
            tokio::task::yield_now().await;
            while count < MAX_BATCH {
                let Ok(job) = rx.try_recv() else { break };
                count += job.0.len();
                jobs.push(job);
            }
        }
        let (pairs, replies): (Vec<Vec<Pair>>, Vec<_>) = jobs.into_iter().unzip();
        let (engine, shared) = (engine.clone(), shared.clone());
        let outcome = tokio::task::spawn_blocking(move || {
            let _shared = shared.read();
            let batch: Vec<(&[u8], Option<&[u8]>)> = pairs
                .iter()
                .flatten()
                .map(|(k, v)| (k.as_slice(), Some(v.as_slice())))
                .collect();
            engine.write_batch(&batch).map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(format!("the commit failed: {e}")));
        for reply in replies {
            let _ = reply.send(outcome.clone());
        }
    }
}
