package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// defaultPageSize is how many items a list method returns per page unless
// Server.SetPageSize says otherwise.
const defaultPageSize = 100

// catalog is one kind of registered item (tools, prompts, ...) in
// registration order. Every entry gets a sequence number when its key is
// first registered; a cursor is the sequence number of the last item of a
// page, so the next page starts after it whatever was added or removed in
// between: items added later get higher numbers and show up at the end,
// never shifting a page the client has not read yet.
//
// Entries are immutable once stored (replacing an item stores a new entry
// with the old sequence number), so pages can be marshalled after the
// server's lock is released. The Server's mu guards a catalog.
type catalog[T any] struct {
	byKey map[string]*entry[T]
	list  []*entry[T] // by seq
	next  uint64      // the last seq handed out
}

type entry[T any] struct {
	seq uint64
	key string
	val T
}

// getBytes is get with the key as bytes: the lookup makes no string.
func (c *catalog[T]) getBytes(key []byte) (T, bool) {
	e, ok := c.byKey[string(key)]
	if !ok {
		var zero T
		return zero, false
	}
	return e.val, true
}

func (c *catalog[T]) get(key string) (T, bool) {
	e, ok := c.byKey[key]
	if !ok {
		var zero T
		return zero, false
	}
	return e.val, true
}

func (c *catalog[T]) put(key string, val T) {
	if c.byKey == nil {
		c.byKey = map[string]*entry[T]{}
	}
	if old, ok := c.byKey[key]; ok {
		e := &entry[T]{seq: old.seq, key: key, val: val}
		c.byKey[key] = e
		c.list[c.index(old.seq)] = e
		return
	}
	c.next++
	e := &entry[T]{seq: c.next, key: key, val: val}
	c.byKey[key] = e
	c.list = append(c.list, e)
}

func (c *catalog[T]) remove(key string) bool {
	e, ok := c.byKey[key]
	if !ok {
		return false
	}
	delete(c.byKey, key)
	i := c.index(e.seq)
	c.list = append(c.list[:i], c.list[i+1:]...)
	return true
}

// index returns the position of the first entry with a sequence number >= seq.
func (c *catalog[T]) index(seq uint64) int {
	return sort.Search(len(c.list), func(i int) bool { return c.list[i].seq >= seq })
}

// page returns up to n items after sequence number after (0: from the
// start) and the sequence number to continue from, 0 when this is the last
// page. keep, when set, leaves out the items it refuses: the page is
// still filled with up to n items that it keeps.
func (c *catalog[T]) page(after uint64, n int, keep func(T) bool) ([]T, uint64) {
	i := c.index(after + 1)
	j := min(i+n, len(c.list))
	if keep == nil {
		out := make([]T, 0, j-i)
		for _, e := range c.list[i:j] {
			out = append(out, e.val)
		}
		if j == len(c.list) || j == i {
			return out, 0
		}
		return out, c.list[j-1].seq
	}
	out := make([]T, 0, j-i)
	for j = i; j < len(c.list) && len(out) < n; j++ {
		if v := c.list[j].val; keep(v) {
			out = append(out, v)
		}
	}
	if j == len(c.list) || j == i {
		return out, 0
	}
	return out, c.list[j-1].seq
}

// values returns every item in order.
func (c *catalog[T]) values() []T {
	out := make([]T, 0, len(c.list))
	for _, e := range c.list {
		out = append(out, e.val)
	}
	return out
}

// listPage serves one page of a list method (tools/list, prompts/list,
// resources/list, resources/templates/list): it waits until the lists are
// ready (WaitBeforeListing), reads the request's cursor for the list named
// by letter, takes the page from c under the server's lock, and shows each
// item as the request's revision has it (view, run after the lock is
// released: entries are immutable). Items whose Access (access) does not
// let the request's caller in are left out. It returns the items and the
// cursor of the next page, "" on the last.
func listPage[E, T any](ctx context.Context, s *Server, req *Request, c *catalog[E], letter byte, access func(E) *Access, view func(E, *Request) T) ([]T, string, error) {
	s.awaitLists(ctx)
	s.mu.RLock()
	after, err := parseCursor(req.Params, letter, c.next)
	if err != nil {
		s.mu.RUnlock()
		return nil, "", err
	}
	var keep func(E) bool
	if s.guarded.Load() {
		keep = func(e E) bool { return access(e).Allows(req.Caller) }
	}
	page, next := c.page(after, s.pageSize, keep)
	s.mu.RUnlock()
	list := make([]T, len(page))
	for i, e := range page {
		list[i] = view(e, req)
	}
	cursor := ""
	if next != 0 {
		cursor = makeCursor(letter, next)
	}
	return list, cursor, nil
}

// A cursor is base64url("<letter><seq>"): the letter names the list, so a
// tools/list cursor is not taken by prompts/list. Clients must treat it as
// opaque.
func makeCursor(list byte, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString(strconv.AppendUint([]byte{list}, seq, 10))
}

var errInvalidCursor = invalidParams("invalid cursor")

// parseCursor reads a list method's params and returns the sequence number
// to continue after (0 when there is no cursor). A cursor this server did
// not hand out for this list is an error (-32602).
func parseCursor(params json.RawMessage, list byte, next uint64) (uint64, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return 0, invalidParams("params must be an object with an optional string cursor")
	}
	if p.Cursor == nil {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
	if err != nil || len(raw) < 2 || raw[0] != list {
		return 0, errInvalidCursor
	}
	seq, err := strconv.ParseUint(string(raw[1:]), 10, 64)
	if err != nil || seq == 0 || seq > next || strconv.FormatUint(seq, 10) != string(raw[1:]) {
		return 0, errInvalidCursor
	}
	return seq, nil
}

// invalidParams is the -32602 error, worded like the session's.
func invalidParams(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + msg}
}
