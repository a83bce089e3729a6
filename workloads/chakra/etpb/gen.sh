#!/bin/sh
# Regenerates et_def.pb.go from the vendored Chakra schema. Needs protoc
# (Debian: protobuf-compiler) and protoc-gen-go at the version go.mod
# requires for google.golang.org/protobuf:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
set -eu
cd "$(dirname "$0")"
protoc --go_out=. --go_opt=paths=source_relative \
	--go_opt=Met_def.proto=github.com/rocelab/rocelab/workloads/chakra/etpb \
	et_def.proto
