//! The words for what a type wanted when only its visitor's description
//! says it: a value read from the buffered copy serde keeps of a
//! flattened object or an untagged enum (a party's `mmr`), where the
//! deserializer's own call is not seen. Primitive descriptions become
//! the API's words; a type's own description is kept unless it names a
//! Rust type. `serde_descriptions_are_the_ones_worded` keeps the list in
//! step with serde, so an upgrade that rewords them fails a test instead of
//! changing an answer.

/// `raw`, a visitor's description of what it expected, in the API's words.
pub fn expected(raw: &str) -> String {
    let raw = raw.trim();
    let words = match raw {
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "u128" | "usize" => "a whole number of at least 0",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a string" | "a borrowed string" | "a character" | "char" | "string" => "a string",
        "a boolean" | "bool" => "true or false",
        "a sequence" => "an array",
        "a map" => "an object",
        other
            if other.starts_with("struct")
                || other.starts_with("internally tagged enum")
                || other.starts_with("adjacently tagged enum")
                || other.starts_with("map") =>
        {
            "an object"
        }
        other if other.starts_with("tuple") || other.starts_with("a tuple") => "an array",
        other if other.starts_with("enum") || other.contains("variant") => {
            "one of the allowed values"
        }
        other if looks_rusty(other) => "a value of another type",
        other => return other.to_owned(),
    };
    words.to_owned()
}

/// Whether `text` names a Rust type (`struct X`, `a::B`, `Vec<…>`, `u32`…).
pub fn looks_rusty(text: &str) -> bool {
    const PRIMITIVES: [&str; 14] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64",
    ];
    text.contains("::")
        || text.contains("struct ")
        || text.contains("enum ")
        || text.contains("Vec<")
        || text.contains("Option<")
        || text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| PRIMITIVES.contains(&word))
}
