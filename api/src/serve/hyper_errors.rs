//! Problem bodies for the refusals hyper writes itself.
//!
//! A request whose head hyper cannot parse never reaches the router: hyper
//! answers it on its own, with an empty body, and closes the connection —
//! `400` (a bad request line, method, URI or header), `414` (URI too long)
//! or `431` (head too large). [`ProblemIo`] sits between hyper and the
//! socket and replaces exactly those answers (recognised by their status
//! line, `content-length: 0` and no `content-type`, which no answer of the
//! router has: every error it sends is a problem) with the same status and
//! an `application/problem+json` body, so every error a client can get is
//! a problem.
//!
//! The same wrapper holds the connection's slot under the connection cap
//! ([`super::ConnectionLimits::max_connections`]) for as long as the socket
//! exists. The slot cannot be held by the task that drives hyper's
//! connection: on an upgrade (a WebSocket search) hyper hands the socket
//! over to the upgraded stream and its connection future ends, so a slot
//! dropped with that task would be freed while the WebSocket stayed open.
//! Carried by the socket's wrapper, the slot goes wherever the socket goes,
//! into any upgrade, and is freed when the socket is dropped.

use crate::problem::{ApiError, PROBLEM_JSON};
use axum::http::StatusCode;
use matchplane_matchmaker::Code;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::OwnedSemaphorePermit;

/// A connection whose hyper-made refusals get problem bodies, holding its
/// connection slot until it is dropped.
#[derive(Debug)]
pub struct ProblemIo<T> {
    inner: T,
    /// A replacement answer still to write, and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
    /// Freed on drop, with the socket.
    _slot: OwnedSemaphorePermit,
}

impl<T> ProblemIo<T> {
    /// Wraps `inner`, which holds `slot` until it is dropped.
    pub fn new(inner: T, slot: OwnedSemaphorePermit) -> Self {
        Self {
            inner,
            pending: None,
            _slot: slot,
        }
    }
}

/// The status of one of hyper's own refusals written in `head`, if it is one.
fn hyper_refusal(head: &[u8]) -> Option<StatusCode> {
    let status = [
        (
            &b"HTTP/1.1 400 Bad Request\r\n"[..],
            StatusCode::BAD_REQUEST,
        ),
        (
            &b"HTTP/1.1 414 URI Too Long\r\n"[..],
            StatusCode::URI_TOO_LONG,
        ),
        (
            &b"HTTP/1.1 431 Request Header Fields Too Large\r\n"[..],
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        ),
    ]
    .into_iter()
    .find(|(line, _)| head.starts_with(line))?
    .1;
    let end = memchr::memmem::find(head, b"\r\n\r\n")?;
    let lower = head[..end].to_ascii_lowercase();
    let empty = memchr::memmem::find(&lower, b"\r\ncontent-length: 0").is_some();
    let typed = memchr::memmem::find(&lower, b"\r\ncontent-type:").is_some();
    (empty && !typed && end + 4 == head.len()).then_some(status)
}

/// The problem answer that replaces hyper's refusal with `status`.
pub fn refusal_answer(status: StatusCode) -> Vec<u8> {
    let (code, detail) = match status {
        StatusCode::URI_TOO_LONG => (Code::UriTooLong.as_str(), "the request URI is too long"),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => (
            Code::HeadersTooLarge.as_str(),
            "the request's headers are too large or too many",
        ),
        _ => (
            Code::ValidationError.as_str(),
            "the request line or a header could not be parsed as HTTP",
        ),
    };
    let body = serde_json::to_vec(&ApiError::with_status(status, code, detail).problem())
        .unwrap_or_default();
    let mut answer = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {PROBLEM_JSON}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

impl<T: AsyncWrite + Unpin> ProblemIo<T> {
    /// Writes what is left of a replacement answer.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((answer, written)) = &mut self.pending {
            if *written >= answer.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &answer[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }

    /// Takes `buf` as written if it is one of hyper's refusals, queueing
    /// its replacement.
    fn replaced(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<io::Result<usize>>> {
        let status = hyper_refusal(buf)?;
        self.pending = Some((refusal_answer(status), 0));
        Some(match self.drain(cx) {
            Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
            _ => Poll::Ready(Ok(buf.len())),
        })
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ProblemIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ProblemIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(done) = self.replaced(cx, buf) {
            return done;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        // hyper's refusal is its head alone: one non-empty slice.
        let mut non_empty = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (non_empty.next(), non_empty.next()) {
            if let Some(done) = self.replaced(cx, only) {
                return done;
            }
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_own_empty_refusals_are_recognised() {
        let hyper = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Tue, 01 Dec 2026 12:00:00 GMT\r\n\r\n";
        assert_eq!(
            hyper_refusal(hyper),
            Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        );
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(hyper_refusal(ours), None);
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(hyper_refusal(with_body), None);
        let answer = String::from_utf8(refusal_answer(StatusCode::URI_TOO_LONG)).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 414 URI Too Long\r\n"),
            "{answer}"
        );
        assert!(answer.contains("\"code\":\"URI_TOO_LONG\""), "{answer}");
    }
}
