// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3), built from
// this module so that its version is pinned by go.mod.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
