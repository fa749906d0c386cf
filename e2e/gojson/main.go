// gojson: the Go side of `make gojson-diff` (tools/gojson-diff). For each
// input, one hex-encoded line on stdin, it prints one JSON line on stdout
// with what Go's encoding/json and the controller's code make of it:
//
//   - sel: json.Unmarshal into []*NetworkSelectionElement (nadutils v1.7.7),
//     the fields the policy reads, or "syntax" / "type";
//   - conf, list: json.Unmarshal into CNI v1.3.0's types.NetConf and
//     types.NetConfList, or "syntax" / "type";
//   - pna: nadutils.ParseNetworkAnnotation(input, "pod-ns"), or "error" /
//     "panic" (a null selection is dereferenced);
//   - nad: what kube-ovn-controller's getPodKubeovnNets makes of the text as
//     a NAD's spec.config: loadNetConf (kube-ovn pkg/controller/
//     network_attachment.go:82 at 1533681d7a6b, with multus v4.3.0's
//     LoadDelegateNetConfList), then util.IsOvnNetwork, else
//     isKubeOVNIPAMNetwork (pod.go:2228, 2313): "ovn", "ipam", "none",
//     "error" or "panic".
//
// Those three functions are written out below as they read upstream; the
// types come from the modules themselves.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/containernetworking/cni/pkg/types"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	nadutils "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/utils"
)

const cniTypeName = "kube-ovn"

type selection struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Interface string   `json:"interface"`
	IPs       []string `json:"ips"`
	Mac       string   `json:"mac"`
}

type plugin struct {
	Type string `json:"type"`
	IPAM string `json:"ipam"`
}

type pluginList struct {
	Plugins *[]*plugin `json:"plugins"`
}

type result struct {
	Sel  any `json:"sel"`
	Conf any `json:"conf"`
	List any `json:"list"`
	PNA  any `json:"pna"`
	NAD  any `json:"nad"`
}

func kind(err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return "syntax"
	}
	return "type"
}

func of(p *types.NetConf) *plugin {
	if p == nil {
		return nil
	}
	return &plugin{Type: p.Type, IPAM: p.IPAM.Type}
}

// The multus DelegateNetConf fields loadNetConf fills.
type delegateNetConf struct {
	Conf     types.NetConf
	ConfList types.NetConfList
}

// loadDelegateNetConfList: multus v4.3.0 pkg/types/conf.go:47.
func loadDelegateNetConfList(bytes []byte, delegateConf *delegateNetConf) error {
	if err := json.Unmarshal(bytes, &delegateConf.ConfList); err != nil {
		return err
	}
	if delegateConf.ConfList.Plugins == nil {
		return fmt.Errorf("delegate must have the 'type' or 'plugin' field")
	}
	if delegateConf.ConfList.Plugins[0].Type == "" {
		return fmt.Errorf("a plugin delegate must have the 'type' field")
	}
	return nil
}

// loadNetConf: kube-ovn pkg/controller/network_attachment.go:82.
func loadNetConf(bytes []byte) (*delegateNetConf, error) {
	delegateConf := &delegateNetConf{}
	if err := json.Unmarshal(bytes, &delegateConf.Conf); err != nil {
		return nil, err
	}
	if delegateConf.Conf.Type == "" {
		if err := loadDelegateNetConfList(bytes, delegateConf); err != nil {
			return nil, err
		}
	}
	return delegateConf, nil
}

// isOvnNetwork: kube-ovn pkg/util/network_attachment.go:13.
func isOvnNetwork(netCfg *delegateNetConf) bool {
	if netCfg.Conf.Type == cniTypeName {
		return true
	}
	for _, item := range netCfg.ConfList.Plugins {
		if item.Type == cniTypeName {
			return true
		}
	}
	return false
}

// isKubeOVNIPAMNetwork: kube-ovn pkg/controller/pod.go:2347.
func isKubeOVNIPAMNetwork(netCfg *delegateNetConf) bool {
	if netCfg.Conf.IPAM.Type == cniTypeName {
		return true
	}
	for _, plugin := range netCfg.ConfList.Plugins {
		if plugin.IPAM.Type == cniTypeName {
			return true
		}
	}
	return false
}

func nadKind(data []byte) (out string) {
	defer func() {
		if recover() != nil {
			out = "panic"
		}
	}()
	netCfg, err := loadNetConf(data)
	if err != nil {
		return "error"
	}
	if isOvnNetwork(netCfg) {
		return "ovn"
	}
	if isKubeOVNIPAMNetwork(netCfg) {
		return "ipam"
	}
	return "none"
}

func pna(data []byte) (out any) {
	defer func() {
		if recover() != nil {
			out = "panic"
		}
	}()
	networks, err := nadutils.ParseNetworkAnnotation(string(data), "pod-ns")
	if err != nil {
		return "error"
	}
	list := []selection{}
	for _, n := range networks {
		list = append(list, selection{n.Name, n.Namespace, n.InterfaceRequest, n.IPRequest, n.MacRequest})
	}
	return list
}

func evaluate(data []byte) result {
	var r result
	var networks []*nadv1.NetworkSelectionElement
	if err := json.Unmarshal(data, &networks); err != nil {
		r.Sel = kind(err)
	} else {
		list := []*selection{}
		for _, n := range networks {
			if n == nil {
				list = append(list, nil)
				continue
			}
			list = append(list, &selection{n.Name, n.Namespace, n.InterfaceRequest, n.IPRequest, n.MacRequest})
		}
		r.Sel = list
	}
	var conf types.NetConf
	if err := json.Unmarshal(data, &conf); err != nil {
		r.Conf = kind(err)
	} else {
		r.Conf = of(&conf)
	}
	var confList types.NetConfList
	if err := json.Unmarshal(data, &confList); err != nil {
		r.List = kind(err)
	} else {
		var l pluginList
		if confList.Plugins != nil {
			plugins := []*plugin{}
			for _, p := range confList.Plugins {
				plugins = append(plugins, of(p))
			}
			l.Plugins = &plugins
		}
		r.List = l
	}
	r.PNA = pna(data)
	r.NAD = nadKind(data)
	return r
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	enc := json.NewEncoder(out)
	interactive := len(os.Args) > 1 && os.Args[1] == "-flush"
	for in.Scan() {
		data, err := hex.DecodeString(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, "gojson: input is not hex:", err)
			os.Exit(2)
		}
		if err := enc.Encode(evaluate(data)); err != nil {
			fmt.Fprintln(os.Stderr, "gojson:", err)
			os.Exit(2)
		}
		if interactive {
			out.Flush()
		}
	}
	out.Flush()
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "gojson:", err)
		os.Exit(2)
	}
}
