package mcp

import "errors"

// ErrInputRequired says that a 2026-07-28 request is answered with
// input_required: the side that asked must answer questions first and
// send the request again. One error for both sides, since a gateway is
// both: it meets it from its backends (package client) and gives it to
// its own clients (package handlers).
//
// On the server side it is what handlers.Request.Ask returns when the
// client's answer is not part of this round; the handler must return it
// (or an error wrapping it) as is, and the client's retry runs the handler
// again from the start, this time with the answer. Handlers that ask
// should therefore ask before they change anything. In the legacy
// revisions Ask sends the client a request and waits instead.
//
// On the client side it is what a request sent with client.Client.Go gets
// when the server answers input_required: Go does not ask the client's
// questions (Options.Elicitation and the like); Call does.
var ErrInputRequired = errors.New("mcp: input required")
