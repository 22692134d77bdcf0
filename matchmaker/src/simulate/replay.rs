//! Replay of real rated games (`data/lichess/lichess-games.csv` in the repository) through
//! a `[1,1]` MMR mode: each game's two players arrive in the games' real
//! order with their real ratings, at a steady rate.

use super::scenario::{Event, ScenarioError};
use crate::codes::Code;
use crate::validation::FieldError;

/// Arrivals built from real games, and the rating gaps of the real pairings.
#[derive(Debug, Clone)]
pub struct LichessReplay {
    /// White then black of each game, `1 / rate` seconds apart.
    pub events: Vec<Event>,
    /// `|white_rating - black_rating|` of each game used.
    pub real_gaps: Vec<f64>,
}

/// Reads the Lichess CSV text (columns `white`, `white_rating`, `black`,
/// `black_rating`, in the file's chronological order) and turns the first
/// `games` games into arrivals at `rate` arrivals per second.
///
/// # Errors
/// `VALIDATION_ERROR` naming the first row that cannot be read.
pub fn lichess_arrivals(
    csv_text: &str,
    games: usize,
    rate: f64,
) -> Result<LichessReplay, ScenarioError> {
    let bad = |row: usize, message: String| {
        ScenarioError(vec![FieldError::new(
            format!("games row {row}"),
            Code::ValidationError,
            message,
        )])
    };
    if !rate.is_finite() || rate <= 0.0 {
        return Err(bad(
            0,
            "rate must be a positive number of arrivals per second".into(),
        ));
    }
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = reader.headers().map_err(|e| bad(0, e.to_string()))?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| bad(0, format!("missing column {name}")))
    };
    let (w, wr, b, br) = (
        col("white")?,
        col("white_rating")?,
        col("black")?,
        col("black_rating")?,
    );
    let mut events = Vec::new();
    let mut real_gaps = Vec::new();
    for (i, record) in reader.records().take(games).enumerate() {
        let record = record.map_err(|e| bad(i + 1, e.to_string()))?;
        let rating = |c: usize| -> Result<f64, ScenarioError> {
            record
                .get(c)
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| bad(i + 1, "a rating is not a number".into()))
        };
        let (white_rating, black_rating) = (rating(wr)?, rating(br)?);
        for (n, (player, mmr)) in [(w, white_rating), (b, black_rating)]
            .into_iter()
            .enumerate()
        {
            events.push(Event::Arrival {
                at: (2 * i + n) as f64 / rate,
                player_id: record.get(player).unwrap_or_default().to_string(),
                mmr: Some(mmr),
                ping_ms: None,
                party: None,
                latencies: None,
                data: None,
                answer: None,
                attributes: Default::default(),
            });
        }
        real_gaps.push((white_rating - black_rating).abs());
    }
    Ok(LichessReplay { events, real_gaps })
}
