// Package uritemplate implements RFC 6570 URI Templates, as used by MCP
// resource templates (resources/templates/list, resources/read of a URI that
// matches a template, completion/complete for template variables).
//
// It depends on the standard library only.
//
// # Parsing and expansion
//
// Parse accepts the full RFC 6570 syntax, levels 1 to 4: the operators
// none, +, #, ., /, ;, ? and &, variable lists, the explode modifier (*) and
// the prefix modifier (:N, 1 <= N <= 9999). A malformed template's error
// names the byte offset of the fault. Expansion (the package's own: its
// tests check Match against it) follows RFC 6570 Appendix A exactly;
// values are strings, lists ([]string) or associative arrays
// (map[string]string in sorted key order, or [][2]string in the given
// order), and undefined variables are skipped. Booleans, numbers and
// fmt.Stringers are accepted as strings for convenience.
//
// # Matching
//
// Match is the reverse of expansion: it reports whether a URI is one that the
// template describes and extracts the variable values. The rules are:
//
//   - Matching is anchored: the template must cover the whole URI. Literal
//     text must appear exactly (as expansion writes it, i.e. with
//     characters not allowed in URIs percent-encoded).
//
//   - Values are percent-decoded ("%20" becomes " "; '+' is kept as is). A
//     malformed percent-encoding in a value means no match.
//
//   - Variables that the URI does not define (an omitted optional query
//     parameter, an absent {/x} segment, ...) are absent from the result map.
//     A matched URI with no variables yields an empty, non-nil map.
//
//   - Simple expansion {var} matches a non-empty run of characters that
//     contains no '/', '?' or '#'. In a list {x,y} the run is split on ','
//     and the pieces are given to the variables left to right; variables
//     without a piece are undefined; more pieces than variables only match
//     when a variable is exploded ({x,list*}), which then takes the surplus,
//     joined by ','. So a simple variable never contains a raw ',' unless it
//     is exploded.
//
//   - Reserved expansion {+var} is like simple expansion but the run may also
//     contain '/' (and any other reserved character except '?' and '#'). With
//     no exploded variable, surplus ','-separated pieces go to the last
//     variable, so {+path} matches "a,b/c" with path="a,b/c".
//
//   - Fragment expansion {#var} matches either nothing (all variables
//     undefined) or '#' followed by the rest of the URI, split on ',' like
//     reserved expansion.
//
//   - Label {.var} and path segments {/var} match nothing or a sequence of
//     '.'-prefixed labels / '/'-prefixed segments (neither may contain '?' or
//     '#'; labels not '/' either). Each variable takes one label or segment,
//     left to right. An exploded variable ({/path*}) takes the surplus: it may
//     span several segments and its value is joined by '/' for path segments
//     and by ',' for labels. Without an exploded variable, surplus labels go
//     to the last variable joined by '.' ({.ext} matches ".tar.gz" with
//     ext="tar.gz"), and surplus path segments mean no match.
//
//   - Path-style parameters {;a,b}, form-style queries {?a,b} and query
//     continuations {&c} are sets of name[=value] parameters (separated by
//     ';' resp. '&'; ';' parameters contain no '/', '?' or '#', query ones no
//     '#'): order does not
//     matter, missing parameters leave their variable undefined, parameters
//     named after no variable of the template are allowed and ignored, a
//     parameter without '=' has the empty value, and a parameter given
//     several times (an exploded list, "?x=1&x=2") yields its values joined
//     by ','.
//
//   - When a template ends in a query section - a {?...} expression or a
//     literal '?' followed only by {?...}/{&...} expressions and literal
//     parameters, optionally followed by a final {#...} - the whole query of
//     the URI (between the first '?' and the first '#') is compared as one
//     unordered set: "db://tables/{table}{?limit,offset}" matches
//     "db://tables/users?offset=10&limit=5&x=y", and "/s?fixed=yes{&x}"
//     matches "/s?x=1&fixed=yes" (literal parameters are required). The query
//     may be absent entirely, and parameter values may contain '/' and '?'.
//     A URI with a fragment then only matches if the template ends in
//     {#...}. Other templates (e.g. "/search?q={q}") are matched position by
//     position as described above.
//
//   - When several divisions of the URI are possible, each variable but the
//     last takes the shortest text that lets the rest of the template match
//     (leftmost-shortest): "{a}-{b}" matches "x-y-z" with a="x", b="y-z". For
//     operators with a leading character ({/a}{/b} against "/x") a non-empty
//     text is preferred, so earlier variables are filled first (a="x").
//
//   - A variable that occurs more than once must match the same value each
//     time; an occurrence with a prefix modifier must match that prefix of
//     the value ("{/var:1,var}" matches "/v/value", not "/x/value").
//
//   - Prefix modifiers do not constrain matching: {var:3} matches any value
//     its operator allows and returns the text found. Exploded associative
//     arrays in named expressions ({?keys*}) cannot be recovered; their
//     parameters are treated as unknown parameters.
//
// Expansion followed by Match gives the values back when they are strings
// without reserved characters (simple-expansion values with reserved
// characters come back too, since expansion percent-encodes them), every
// variable of a simple or reserved expression is defined and non-empty, and
// adjacent expressions without a literal between them split unambiguously.
// Exploded lists come back joined by '/' in path segments and by ','
// elsewhere.
package uritemplate
