module github.com/mcprt/mcprt/test/interop

go 1.26

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/mcprt/mcprt v0.0.0-00010101000000-000000000000
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

require (
	github.com/DataDog/gostackparse v0.7.0 // indirect
	github.com/anthdm/hollywood v1.0.5 // indirect
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/mcprt/mcprt => ../..
