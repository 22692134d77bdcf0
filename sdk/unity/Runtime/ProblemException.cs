// The server's problem+json answer as an exception.
using System;
using System.Collections.Generic;

namespace Matchplane.Client
{
    /// <summary>A problem answer of the server (`application/problem+json`).</summary>
    public sealed class ProblemException : Exception
    {
        /// <summary>The HTTP status.</summary>
        public readonly int Status;
        /// <summary>The stable code, e.g. TICKET_INVALID.</summary>
        public readonly string Code;
        /// <summary>What went wrong.</summary>
        public readonly string Detail;
        /// <summary>
        /// The match waiting for its assignment, for PLAYER_IN_MATCH (the player may not search
        /// until the studio assigns or releases it); null otherwise.
        /// </summary>
        public readonly string MatchId;
        /// <summary>The `Retry-After` header in seconds (or the body's retryAfterSeconds), when given.</summary>
        public readonly double? RetryAfterSeconds;
        /// <summary>The whole body.</summary>
        public readonly Dictionary<string, object> Body;

        ProblemException(int status, string code, string detail, string matchId, double? retryAfter, Dictionary<string, object> body)
            : base(status + " " + code + ": " + detail)
        {
            Status = status;
            Code = code;
            Detail = detail;
            MatchId = matchId;
            RetryAfterSeconds = retryAfter;
            Body = body;
        }

        /// <summary>The problem a body carries, else a plain HTTP error with Code "HTTP_" + status.</summary>
        public static ProblemException From(int status, string body, string retryAfterHeader)
        {
            var map = Json.TryParse(body ?? "") as Dictionary<string, object>;
            double header;
            double? retry = double.TryParse(retryAfterHeader, System.Globalization.NumberStyles.Float,
                System.Globalization.CultureInfo.InvariantCulture, out header) ? (double?)header : SearchMessage.Num(map, "retryAfterSeconds");
            string code = SearchMessage.Str(map, "code") ?? ("HTTP_" + status);
            return new ProblemException(status, code, SearchMessage.Str(map, "detail") ?? "", SearchMessage.Str(map, "matchId"),
                retry, map ?? new Dictionary<string, object>());
        }
    }
}
