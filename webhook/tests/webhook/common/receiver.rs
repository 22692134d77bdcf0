//! A local webhook receiver: answers from a script and keeps every request
//! exactly as it arrived (headers and raw body bytes).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use chrono::{DateTime, Utc};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    /// Never answer (the request hangs until the client gives up).
    pub hang: bool,
}

impl Reply {
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: String::new(),
            hang: false,
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    pub fn hang() -> Self {
        Self {
            hang: true,
            ..Self::status(200)
        }
    }
}

/// A request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub received_at: DateTime<Utc>,
}

impl Received {
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    }
}

type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

struct Inner {
    script: Mutex<VecDeque<Reply>>,
    otherwise: Reply,
    received: Mutex<Vec<Received>>,
    clock: Clock,
}

/// A running receiver on 127.0.0.1, port chosen by the OS.
pub struct Receiver {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

impl Receiver {
    /// Answers `script` in order, then `otherwise` forever.
    pub async fn start(script: Vec<Reply>, otherwise: Reply) -> Self {
        Self::start_with_clock(script, otherwise, Arc::new(Utc::now)).await
    }

    /// As [`Receiver::start`], stamping arrivals with `clock`.
    pub async fn start_with_clock(script: Vec<Reply>, otherwise: Reply, clock: Clock) -> Self {
        let inner = Arc::new(Inner {
            script: Mutex::new(script.into()),
            otherwise,
            received: Mutex::new(Vec::new()),
            clock,
        });
        let app = Router::new()
            .route("/{*path}", post(handle))
            .with_state(Arc::clone(&inner));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { addr, inner }
    }

    /// `http://127.0.0.1:<port>/hook`.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().unwrap().clone()
    }
}

async fn handle(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: Bytes) -> Response {
    inner.received.lock().unwrap().push(Received {
        headers,
        body: body.to_vec(),
        received_at: (inner.clock)(),
    });
    let reply = {
        let mut script = inner.script.lock().unwrap();
        script
            .pop_front()
            .unwrap_or_else(|| inner.otherwise.clone())
    };
    if reply.hang {
        std::future::pending::<()>().await;
    }
    let mut response = (StatusCode::from_u16(reply.status).unwrap(), reply.body).into_response();
    for (name, value) in reply.headers {
        response.headers_mut().insert(name, value.parse().unwrap());
    }
    response
}
