// A small JSON reader and writer, so the package needs nothing beyond what
// Unity ships. Objects parse to Dictionary<string, object>, arrays to
// List<object>, numbers to double, and true/false/null to bool/null.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Matchplane.Client
{
    /// <summary>Parses and writes JSON text.</summary>
    public static class Json
    {
        /// <summary>The value of a JSON text; throws <see cref="FormatException"/> on malformed text.</summary>
        public static object Parse(string text)
        {
            int i = 0;
            object value = ReadValue(text, ref i);
            SkipSpace(text, ref i);
            if (i != text.Length) throw new FormatException("trailing characters at " + i);
            return value;
        }

        /// <summary>The value of a JSON text, or null when it is not JSON.</summary>
        public static object TryParse(string text)
        {
            try { return Parse(text); } catch (FormatException) { return null; }
        }

        /// <summary>A JSON string literal of <paramref name="s"/>.</summary>
        public static string Quote(string s)
        {
            var sb = new StringBuilder("\"");
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
                        else sb.Append(c);
                        break;
                }
            }
            return sb.Append('"').ToString();
        }

        /// <summary>JSON text of a value made of dictionaries, lists, strings, numbers, bools and null.</summary>
        public static string Write(object value)
        {
            if (value == null) return "null";
            if (value is string s) return Quote(s);
            if (value is bool b) return b ? "true" : "false";
            if (value is double d) return d.ToString("R", CultureInfo.InvariantCulture);
            if (value is int n) return n.ToString(CultureInfo.InvariantCulture);
            if (value is long l) return l.ToString(CultureInfo.InvariantCulture);
            if (value is IDictionary<string, object> map)
            {
                var parts = new List<string>();
                foreach (var kv in map) parts.Add(Quote(kv.Key) + ":" + Write(kv.Value));
                return "{" + string.Join(",", parts) + "}";
            }
            if (value is System.Collections.IEnumerable list)
            {
                var parts = new List<string>();
                foreach (var item in list) parts.Add(Write(item));
                return "[" + string.Join(",", parts) + "]";
            }
            throw new ArgumentException("cannot write " + value.GetType());
        }

        static void SkipSpace(string t, ref int i)
        {
            while (i < t.Length && char.IsWhiteSpace(t[i])) i++;
        }

        static object ReadValue(string t, ref int i)
        {
            SkipSpace(t, ref i);
            if (i >= t.Length) throw new FormatException("unexpected end");
            char c = t[i];
            if (c == '{') return ReadObject(t, ref i);
            if (c == '[') return ReadArray(t, ref i);
            if (c == '"') return ReadString(t, ref i);
            if (Literal(t, ref i, "true")) return true;
            if (Literal(t, ref i, "false")) return false;
            if (Literal(t, ref i, "null")) return null;
            return ReadNumber(t, ref i);
        }

        static bool Literal(string t, ref int i, string word)
        {
            if (string.CompareOrdinal(t, i, word, 0, word.Length) != 0) return false;
            i += word.Length;
            return true;
        }

        static Dictionary<string, object> ReadObject(string t, ref int i)
        {
            var map = new Dictionary<string, object>();
            i++;
            SkipSpace(t, ref i);
            if (i < t.Length && t[i] == '}') { i++; return map; }
            while (true)
            {
                SkipSpace(t, ref i);
                if (i >= t.Length || t[i] != '"') throw new FormatException("expected a key at " + i);
                string key = ReadString(t, ref i);
                SkipSpace(t, ref i);
                if (i >= t.Length || t[i] != ':') throw new FormatException("expected ':' at " + i);
                i++;
                map[key] = ReadValue(t, ref i);
                SkipSpace(t, ref i);
                if (i < t.Length && t[i] == ',') { i++; continue; }
                if (i < t.Length && t[i] == '}') { i++; return map; }
                throw new FormatException("expected ',' or '}' at " + i);
            }
        }

        static List<object> ReadArray(string t, ref int i)
        {
            var list = new List<object>();
            i++;
            SkipSpace(t, ref i);
            if (i < t.Length && t[i] == ']') { i++; return list; }
            while (true)
            {
                list.Add(ReadValue(t, ref i));
                SkipSpace(t, ref i);
                if (i < t.Length && t[i] == ',') { i++; continue; }
                if (i < t.Length && t[i] == ']') { i++; return list; }
                throw new FormatException("expected ',' or ']' at " + i);
            }
        }

        static string ReadString(string t, ref int i)
        {
            var sb = new StringBuilder();
            i++;
            while (i < t.Length)
            {
                char c = t[i++];
                if (c == '"') return sb.ToString();
                if (c != '\\') { sb.Append(c); continue; }
                if (i >= t.Length) break;
                char e = t[i++];
                switch (e)
                {
                    case 'n': sb.Append('\n'); break;
                    case 'r': sb.Append('\r'); break;
                    case 't': sb.Append('\t'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'u':
                        if (i + 4 > t.Length) throw new FormatException("bad \\u escape");
                        sb.Append((char)int.Parse(t.Substring(i, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                        i += 4;
                        break;
                    default: sb.Append(e); break;
                }
            }
            throw new FormatException("unterminated string");
        }

        static double ReadNumber(string t, ref int i)
        {
            int start = i;
            while (i < t.Length && "+-0123456789.eE".IndexOf(t[i]) >= 0) i++;
            double d;
            if (i == start || !double.TryParse(t.Substring(start, i - start), NumberStyles.Float, CultureInfo.InvariantCulture, out d))
                throw new FormatException("bad value at " + start);
            return d;
        }
    }
}
