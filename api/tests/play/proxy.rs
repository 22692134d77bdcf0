//! A TCP proxy in front of Redis that counts the commands its clients send
//! (RESP arrays), to prove how many round trips an operation costs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct CountingProxy {
    port: u16,
    /// The database part of the upstream URL (`/10`), kept in [`Self::url`].
    db_path: String,
    commands: Arc<AtomicUsize>,
}

impl CountingProxy {
    /// Starts a proxy to the Redis of `url` (`redis://host:port/db`).
    pub async fn start(url: &str) -> Self {
        let rest = url.strip_prefix("redis://").expect("a redis:// URL");
        let (upstream, db_path) = match rest.find('/') {
            Some(i) => (rest[..i].to_owned(), rest[i..].to_owned()),
            None => (rest.to_owned(), String::new()),
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let commands = Arc::new(AtomicUsize::new(0));
        let counter = commands.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = TcpStream::connect(&upstream).await.unwrap();
                tokio::spawn(relay(client, server, counter.clone()));
            }
        });
        Self {
            port,
            db_path,
            commands,
        }
    }

    /// The URL to connect to instead of the upstream's.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}{}", self.port, self.db_path)
    }

    /// Commands sent through the proxy so far.
    pub fn commands(&self) -> usize {
        self.commands.load(Ordering::SeqCst)
    }
}

async fn relay(client: TcpStream, server: TcpStream, commands: Arc<AtomicUsize>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
    });
    let mut pending = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = match client_read.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        pending.extend_from_slice(&chunk[..n]);
        // Counted before forwarding, so the count is in when the answer is.
        while let Some(used) = command_length(&pending) {
            commands.fetch_add(1, Ordering::SeqCst);
            pending.drain(..used);
        }
        if server_write.write_all(&chunk[..n]).await.is_err() {
            return;
        }
    }
}

/// The length of the complete command (`*N` bulk strings) at the start of
/// `buf`, if it is all there.
fn command_length(buf: &[u8]) -> Option<usize> {
    let (count, mut at) = header(buf, b'*')?;
    for _ in 0..count {
        let (len, start) = header(&buf[at..], b'$')?;
        at += start + len + 2;
        if buf.len() < at {
            return None;
        }
    }
    Some(at)
}

/// `<kind><number>\r\n` at the start of `buf`: the number and the line's
/// length.
fn header(buf: &[u8], kind: u8) -> Option<(usize, usize)> {
    if buf.first() != Some(&kind) {
        assert!(
            buf.is_empty(),
            "not a RESP command: {:?}",
            &buf[..buf.len().min(20)]
        );
        return None;
    }
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    let number = std::str::from_utf8(&buf[1..end]).ok()?.parse().ok()?;
    Some((number, end + 2))
}
