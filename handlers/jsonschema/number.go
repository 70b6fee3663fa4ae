package jsonschema

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
)

// numInfo describes a JSON number literal without converting it.
type numInfo struct {
	integral bool // the value has no fractional part (1.0 and 1e2 count)
	zero     bool
	short    bool // ≤15 significant digits, moderate exponent: float64 compares it exactly
	ratSafe  bool // exponent small enough to expand into a big.Rat
}

// analyzeNumber checks that s is a JSON number literal and describes it.
func analyzeNumber(s string) (numInfo, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intEnd := i
	if intEnd == intStart || (s[intStart] == '0' && intEnd-intStart > 1) {
		return numInfo{}, false
	}
	fracStart, fracEnd := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracEnd = i
		if fracEnd == fracStart {
			return numInfo{}, false
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			if exp < 1e8 {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == start {
			return numInfo{}, false
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(s) {
		return numInfo{}, false
	}

	// The digits D = int ++ frac; value = D × 10^(exp - len(frac)).
	digit := func(k int) byte { // k-th digit of D
		n := intEnd - intStart
		if k < n {
			return s[intStart+k]
		}
		return s[fracStart+k-n]
	}
	nd := (intEnd - intStart) + (fracEnd - fracStart)
	lead := 0
	for lead < nd && digit(lead) == '0' {
		lead++
	}
	info := numInfo{ratSafe: exp > -1000 && exp < 1000}
	if lead == nd {
		info.integral, info.zero, info.short = true, true, true
		return info, true
	}
	trail := 0
	for trail < nd-lead && digit(nd-1-trail) == '0' {
		trail++
	}
	sig := nd - lead
	e := exp - (fracEnd - fracStart) // exponent of the last digit
	info.integral = e >= 0 || trail >= -e
	mag := e + sig
	info.short = sig <= 15 && mag > -300 && mag < 300
	return info, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number is a numeric instance or keyword value.
type number struct {
	lit     string // decimal literal (shortest form for float64 values)
	f       float64
	i       int64
	isInt64 bool
	info    numInfo
}

func numberFromLiteral(s string) (number, bool) {
	info, ok := analyzeNumber(s)
	if !ok {
		return number{}, false
	}
	n := number{lit: s, info: info}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		n.i, n.isInt64 = i, true
		n.f = float64(i)
		return n, true
	}
	n.f, _ = strconv.ParseFloat(s, 64) // ±Inf or 0 on range errors
	if info.integral && info.short {
		// e.g. 1.0 or 1e2: keep the exact integer fast path.
		if n.f >= -1<<62 && n.f <= 1<<62 {
			n.i, n.isInt64 = int64(n.f), true
		}
	}
	return n, true
}

func numberFromFloat(f float64) (number, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return number{}, false
	}
	return numberFromLiteral(strconv.FormatFloat(f, 'g', -1, 64))
}

// toNumber converts a decoded instance value to a number.
func toNumber(v any) (number, bool) {
	switch v := v.(type) {
	case json.Number:
		return numberFromLiteral(string(v))
	case float64:
		return numberFromFloat(v)
	case float32:
		return numberFromFloat(float64(v))
	case int:
		return numberFromLiteral(strconv.Itoa(v))
	case int8:
		return numberFromLiteral(strconv.FormatInt(int64(v), 10))
	case int16:
		return numberFromLiteral(strconv.FormatInt(int64(v), 10))
	case int32:
		return numberFromLiteral(strconv.FormatInt(int64(v), 10))
	case int64:
		return numberFromLiteral(strconv.FormatInt(v, 10))
	case uint:
		return numberFromLiteral(strconv.FormatUint(uint64(v), 10))
	case uint8:
		return numberFromLiteral(strconv.FormatUint(uint64(v), 10))
	case uint16:
		return numberFromLiteral(strconv.FormatUint(uint64(v), 10))
	case uint32:
		return numberFromLiteral(strconv.FormatUint(uint64(v), 10))
	case uint64:
		return numberFromLiteral(strconv.FormatUint(v, 10))
	}
	return number{}, false
}

func isNumberValue(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}

func (n number) rat() *big.Rat {
	r, ok := new(big.Rat).SetString(n.lit)
	if !ok {
		return nil
	}
	return r
}

// cmpNumber compares a and b exactly where that is cheap or safe, and as
// float64 otherwise (only for literals with huge exponents).
func cmpNumber(a, b number) int {
	if a.isInt64 && b.isInt64 {
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	if !(a.info.short && b.info.short) && a.info.ratSafe && b.info.ratSafe {
		if ra, rb := a.rat(), b.rat(); ra != nil && rb != nil {
			return ra.Cmp(rb)
		}
	}
	switch {
	case a.f < b.f:
		return -1
	case a.f > b.f:
		return 1
	}
	return 0
}

// multipleOf reports whether n is an integer multiple of m (m > 0).
func multipleOf(n, m number) bool {
	if n.isInt64 && m.isInt64 && m.i != 0 {
		return n.i%m.i == 0
	}
	if n.info.ratSafe && m.info.ratSafe {
		rn, rm := n.rat(), m.rat()
		if rn != nil && rm != nil && rm.Sign() != 0 {
			return new(big.Rat).Quo(rn, rm).IsInt()
		}
	}
	q := n.f / m.f
	if math.IsInf(q, 0) || math.IsNaN(q) {
		return false
	}
	return q == math.Trunc(q)
}
