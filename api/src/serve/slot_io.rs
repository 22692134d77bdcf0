//! A connection that holds its slot under the connection cap
//! ([`super::ConnectionLimits::max_connections`]) for as long as its socket
//! exists.
//!
//! The slot cannot be held by the task that drives hyper's connection: on
//! an upgrade (a WebSocket search) hyper hands the socket over to the
//! upgraded stream and its connection future ends, so a slot dropped with
//! that task was freed while the WebSocket stayed open, and the cap did not
//! count WebSockets at all. Carried by the socket itself, the slot goes
//! wherever the socket goes, into any upgrade, and is freed when the socket
//! is dropped: when the connection ends, or the upgraded stream's owner
//! (the WebSocket's task) lets it go.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::OwnedSemaphorePermit;

/// `inner` holding one connection slot until it is dropped.
#[derive(Debug)]
pub struct SlotIo<T> {
    inner: T,
    /// Freed on drop, with the socket.
    _slot: OwnedSemaphorePermit,
}

impl<T> SlotIo<T> {
    /// `inner` holding `slot`.
    pub fn new(inner: T, slot: OwnedSemaphorePermit) -> Self {
        Self { inner, _slot: slot }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SlotIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SlotIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
