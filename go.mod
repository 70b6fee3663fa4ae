module github.com/mcprt/mcprt

go 1.26

require (
	github.com/anthdm/hollywood v1.0.5
	github.com/oklog/run v1.2.0
)

require (
	github.com/DataDog/gostackparse v0.7.0 // indirect
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
