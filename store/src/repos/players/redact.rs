//! Taking one player out of a stored JSON document (docs/retention.md,
//! "Erasing a player"), leaving every byte of what does not mention them
//! as it was.
//!
//! A document is walked as raw JSON: a container is rewritten only when
//! something inside it changes, so another player's `data` object keeps
//! its key order, spacing and number spelling (docs/searching.md promises
//! it byte for byte). In a changed document:
//! - every string equal to the player's id, a value or an object's key,
//!   becomes the redaction's stand-in;
//! - an object whose `playerId` is the player loses its `data` and
//!   `attributes` (the ticket's own object and declared values).

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// The members an erased player's own entry loses.
const PERSONAL: [&str; 2] = ["data", "attributes"];

/// `text` (one JSON document) with `player` redacted to `stand_in`;
/// `None` when nothing in it mentions the player, or when it is not JSON
/// (left as it is).
pub fn redact(text: &str, player: &str, stand_in: &str) -> Option<String> {
    let raw: &RawValue = serde_json::from_str(text).ok()?;
    redact_raw(raw, player, stand_in)
}

/// [`redact`] over a parsed value (a `json`/`jsonb` column): the value
/// written back, `None` when unchanged.
pub fn redact_value(
    value: &serde_json::Value,
    player: &str,
    stand_in: &str,
) -> Option<serde_json::Value> {
    let text = serde_json::to_string(value).ok()?;
    serde_json::from_str(&redact(&text, player, stand_in)?).ok()
}

fn redact_raw(raw: &RawValue, player: &str, stand_in: &str) -> Option<String> {
    let text = raw.get().trim_start();
    match text.as_bytes().first()? {
        b'"' => {
            let s: String = serde_json::from_str(text).ok()?;
            (s == player).then(|| quoted(stand_in))
        }
        b'[' => {
            let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            let redacted: Vec<Option<String>> = items
                .iter()
                .map(|item| redact_raw(item, player, stand_in))
                .collect();
            if redacted.iter().all(Option::is_none) {
                return None;
            }
            let parts: Vec<&str> = items
                .iter()
                .zip(&redacted)
                .map(|(item, new)| new.as_deref().unwrap_or(item.get()))
                .collect();
            Some(format!("[{}]", parts.join(",")))
        }
        b'{' => {
            let Members(members) = serde_json::from_str(text).ok()?;
            let own = members.iter().any(|(k, v)| {
                k == "playerId"
                    && serde_json::from_str::<String>(v.get()).is_ok_and(|p| p == player)
            });
            let mut changed = false;
            let mut parts = Vec::with_capacity(members.len());
            for (key, value) in &members {
                if own && PERSONAL.contains(&key.as_str()) {
                    changed = true;
                    continue;
                }
                let key_text = if key == player {
                    changed = true;
                    quoted(stand_in)
                } else {
                    quoted(key)
                };
                let value_text = match redact_raw(value, player, stand_in) {
                    Some(new) => {
                        changed = true;
                        new
                    }
                    None => value.get().to_owned(),
                };
                parts.push(format!("{key_text}:{value_text}"));
            }
            changed.then(|| format!("{{{}}}", parts.join(",")))
        }
        _ => None,
    }
}

/// `s` as a JSON string literal.
fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// An object's members in their order, values unparsed.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'a RawValue>()? {
                    members.push((k, v));
                }
                Ok(Members(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(serde::de::Error::custom("an array, not an object"))
            }
        }
        deserializer.deserialize_map(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_players_entry_loses_its_data_and_attributes_and_others_keep_their_bytes() {
        let text = r#"{"teams":[{"players":[{"playerId":"ana","data":{"z":1},"attributes":{"level":3},"mmr":1500},{"playerId":"bo","data":{"z": 1,  "a":[1.50,2e3]},"attributes":{"blocked":["ana"]}}]}],"answers":{"ana":"accepted","bo":"accepted"}}"#;
        let out = redact(text, "ana", "erased-1").unwrap();
        assert_eq!(
            out,
            r#"{"teams":[{"players":[{"playerId":"erased-1","mmr":1500},{"playerId":"bo","data":{"z": 1,  "a":[1.50,2e3]},"attributes":{"blocked":["erased-1"]}}]}],"answers":{"erased-1":"accepted","bo":"accepted"}}"#
        );
        assert!(!out.contains("ana"));
    }

    #[test]
    fn nothing_about_the_player_leaves_the_text_alone() {
        let text = r#"{"players":[{"playerId":"bo","data":{"who":"anatoly"}}], "x": "ana "}"#;
        assert_eq!(redact(text, "ana", "erased"), None);
        assert_eq!(redact("not json", "ana", "erased"), None);
        assert_eq!(redact(r#""ana""#, "ana", "e").as_deref(), Some(r#""e""#));
    }

    #[test]
    fn ids_that_need_escaping_are_compared_as_decoded_strings() {
        let id = "o\"neil\\%_!é";
        let text =
            serde_json::json!({"playerId": id, "data": {"k": 1}, "party": [id, "x"]}).to_string();
        let out = redact(&text, id, "erased").unwrap();
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"playerId": "erased", "party": ["erased", "x"]})
        );
    }

    #[test]
    fn a_parsed_value_round_trips() {
        let value = serde_json::json!([{"playerId": "ana", "attributes": {}}, {"playerId": "bo"}]);
        assert_eq!(
            redact_value(&value, "ana", "erased"),
            Some(serde_json::json!([{"playerId": "erased"}, {"playerId": "bo"}]))
        );
        assert_eq!(redact_value(&value, "cy", "erased"), None);
    }
}
