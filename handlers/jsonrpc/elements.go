package jsonrpc

// Elements calls fn with each element of the JSON array arr, in order, as
// its raw bytes (sub-slices of arr, not copies), until fn returns false. It
// reports false if arr is not an array. arr must be valid JSON (see
// Members): a gateway reads the content blocks of a result it relays this
// way, without decoding them.
func Elements(arr []byte, fn func(val []byte) bool) bool {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return true
	}
	for i < len(arr) {
		end := skipValue(arr, i)
		if !fn(arr[i:end]) {
			return true
		}
		i = skipSpace(arr, end)
		if i >= len(arr) || arr[i] == ']' {
			return true
		}
		i = skipSpace(arr, i+1) // ','
	}
	return true
}
