package controller

// kube-ovn-policy's allocator judge (`make allocator-diff`, e2e/tools/allocator_diff.py).
//
// This file belongs to kube-ovn-policy, not to Kube-OVN. The driver copies it into a Kube-OVN
// checkout's pkg/controller as zz_kop_allocator_diff_test.go, runs
//
//	KOP_ALLOCATOR_CASES=<cases.json> KOP_ALLOCATOR_OUT=<out.json> [KOP_ALLOCATOR_ORDERS=20] \
//	    go test -count=1 -run TestKopAllocatorDiff ./pkg/controller/
//
// and deletes it again. It uses only what that package's own tests use (newFakeControllerWithOptions,
// the fake clientsets, the gomock mocks of the OVN clients and of KubeVirt's client) and what the
// pin, v1.16.2 and v1.15.24 all have, so it compiles against each of them.
//
// Input: a JSON list of cases in kube-ovn-policy's case format (tests/README.md): `name`,
// `request` (an AdmissionRequest whose object is a Pod; CREATE, or UPDATE with oldObject) and
// `cluster` (keys ips, subnets, ippools, vips, vpcs, namespaces, networkattachmentdefinitions,
// pods). Every other key is ignored.
//
// Per case, KOP_ALLOCATOR_ORDERS (default 20) runs, each on a fresh fake controller:
//   - informers filled from `cluster`, plus the request's pod (for an UPDATE the new object is
//     what the listers hold: the controller reads the pod from its lister when it handles the
//     event, by then the new one);
//   - the IPAM filled as InitIPAM fills it: every Subnet, every IPPool, every IP object as a
//     holder of its address under its pod's key (`<spec.namespace>/<spec.podName>`, NIC = the
//     IP object's name), every Vip under its own name;
//   - the OVN NB/SB clients mocked permissively (every method, any arguments, any number of
//     times, zero values: success); KubeVirt's client answers that the VMI exists and is alive;
//     configuration as kube-ovn-controller's defaults where they matter (keep-vm-ip on); the
//     StatefulSet a pod's owner reference names exists (10 replicas);
//   - the real enqueueAddPod(pod) (CREATE) or enqueueUpdatePod(old, new) (UPDATE); when the pod's
//     key lands in addOrUpdatePodQueue, the real handleAddOrUpdatePod(key). Panics are recovered.
//
// The listers of a fresh controller walk Go maps, so every run may list Subnets, IPPools and
// NADs in another order; that is the point of running N of them.
//
// Output (KOP_ALLOCATOR_OUT): {"<case name>": [outcome, ...]}, the distinct outcomes of the runs,
// sorted by their JSON text. An outcome:
//
//	{"nics": [{"provider": p, "ip": "a[,b]", "subnet": s, "flags": [...], "why": [...]}],
//	 "flags": [...]}
//
// `nics` are the NICs the run allocated (the pod patches `<provider>.kubernetes.io/allocated:
// "true"` with `ip_address` and `logical_switch`; the subnet from the IP object it wrote where
// the patch names none), sorted by provider. The vocabulary of `flags` (per NIC, and their union
// at the top with the run's own):
//
//	second_holder  an address of the NIC was already held, in the NIC's subnet, by an IP object
//	               of another pod (another `<namespace>/<podName>` than the pod's own key; a
//	               KubeVirt VM's pods share the VM's name, so a VM's own migration is not one)
//	reserved_pool  an address lies in an IPPool whose spec.namespaces is not empty and does not
//	               list the pod's namespace, the pool being of the NIC's subnet or the one the
//	               NIC's `<provider>.kubernetes.io/ip_pool` names (trimmed)
//	foreign_vip    an address is a Vip's whose spec.namespace is set and is not the pod's, in the
//	               Vip's subnet (any subnet where the pod names the Vip)
//	panic          the controller panicked (top level only; `why` at the top says where)
//	error: <text>  handleAddOrUpdatePod returned an error and the run allocated nothing
//	nothing        the run allocated nothing and returned no error (not enqueued, not alive,
//	               nothing to allocate)
//
// Run alone (go test -run TestKopAllocatorDiff) without KOP_ALLOCATOR_CASES, it is skipped.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"github.com/puzpuzpuz/xsync/v4"
	"go.uber.org/mock/gomock"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/utils/keymutex"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubecli"

	kubeovnv1 "github.com/kubeovn/kube-ovn/pkg/apis/kubeovn/v1"
	kubeovninformerfactory "github.com/kubeovn/kube-ovn/pkg/client/informers/externalversions"
	"github.com/kubeovn/kube-ovn/pkg/ovs"
)

type kopCase struct {
	Name    string `json:"name"`
	Request struct {
		Operation string          `json:"operation"`
		Name      string          `json:"name"`
		Namespace string          `json:"namespace"`
		Object    json.RawMessage `json:"object"`
		OldObject json.RawMessage `json:"oldObject"`
	} `json:"request"`
	Cluster map[string][]json.RawMessage `json:"cluster"`
}

type kopNic struct {
	Provider string   `json:"provider"`
	IP       string   `json:"ip"`
	Subnet   string   `json:"subnet"`
	Flags    []string `json:"flags,omitempty"`
	Why      []string `json:"why,omitempty"`
}

type kopOutcome struct {
	Nics  []kopNic `json:"nics"`
	Flags []string `json:"flags"`
	Why   []string `json:"why,omitempty"`
}

type kopCluster struct {
	subnets    []*kubeovnv1.Subnet
	ips        []*kubeovnv1.IP
	ippools    []*kubeovnv1.IPPool
	vips       []*kubeovnv1.Vip
	vpcs       []*kubeovnv1.Vpc
	namespaces []*corev1.Namespace
	nads       []*nadv1.NetworkAttachmentDefinition
	pods       []*corev1.Pod
}

func kopDecode[T any](raws []json.RawMessage) ([]*T, error) {
	out := make([]*T, 0, len(raws))
	for _, raw := range raws {
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func kopParseCluster(c map[string][]json.RawMessage) (*kopCluster, error) {
	var k kopCluster
	var err error
	if k.subnets, err = kopDecode[kubeovnv1.Subnet](c["subnets"]); err != nil {
		return nil, fmt.Errorf("subnets: %w", err)
	}
	if k.ips, err = kopDecode[kubeovnv1.IP](c["ips"]); err != nil {
		return nil, fmt.Errorf("ips: %w", err)
	}
	if k.ippools, err = kopDecode[kubeovnv1.IPPool](c["ippools"]); err != nil {
		return nil, fmt.Errorf("ippools: %w", err)
	}
	if k.vips, err = kopDecode[kubeovnv1.Vip](c["vips"]); err != nil {
		return nil, fmt.Errorf("vips: %w", err)
	}
	if k.vpcs, err = kopDecode[kubeovnv1.Vpc](c["vpcs"]); err != nil {
		return nil, fmt.Errorf("vpcs: %w", err)
	}
	if k.namespaces, err = kopDecode[corev1.Namespace](c["namespaces"]); err != nil {
		return nil, fmt.Errorf("namespaces: %w", err)
	}
	if k.nads, err = kopDecode[nadv1.NetworkAttachmentDefinition](c["networkattachmentdefinitions"]); err != nil {
		return nil, fmt.Errorf("networkattachmentdefinitions: %w", err)
	}
	if k.pods, err = kopDecode[corev1.Pod](c["pods"]); err != nil {
		return nil, fmt.Errorf("pods: %w", err)
	}
	return &k, nil
}

func kopPod(raw json.RawMessage, c *kopCase) (*corev1.Pod, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	pod := new(corev1.Pod)
	if err := json.Unmarshal(raw, pod); err != nil {
		return nil, err
	}
	if pod.Namespace == "" {
		pod.Namespace = c.Request.Namespace
	}
	if pod.Name == "" {
		pod.Name = c.Request.Name
	}
	return pod, nil
}

// kopPermissive makes every method of a gomock mock (its EXPECT() recorder's methods) accept any
// arguments any number of times, returning zero values (gomock's default): success.
func kopPermissive(mock any) {
	rec := reflect.ValueOf(mock).MethodByName("EXPECT").Call(nil)[0]
	anyArg := reflect.ValueOf(gomock.Any())
	for i := 0; i < rec.NumMethod(); i++ {
		m := rec.Method(i)
		mt := m.Type()
		args := make([]reflect.Value, mt.NumIn())
		for j := range args {
			args[j] = anyArg
		}
		outs := m.Call(args)
		if len(outs) == 1 {
			if at := outs[0].MethodByName("AnyTimes"); at.IsValid() {
				at.Call(nil)
			}
		}
	}
}

func kopNotFound(resource, name string) error {
	return k8serrors.NewNotFound(schema.GroupResource{Group: "kubevirt.io", Resource: resource}, name)
}

// kopKubevirt: every VMI a pod names exists and is alive (a pod with a VMI owner is a launcher of
// a running VM); no VirtualMachine is looked up then.
func kopKubevirt(mc *gomock.Controller) kubecli.KubevirtClient {
	vmis := kubecli.NewMockVirtualMachineInstanceInterface(mc)
	vmis.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, name string, _ metav1.GetOptions) (*kubevirtv1.VirtualMachineInstance, error) {
			return &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
		}).AnyTimes()
	vms := kubecli.NewMockVirtualMachineInterface(mc)
	vms.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, name string, _ metav1.GetOptions) (*kubevirtv1.VirtualMachine, error) {
			return nil, kopNotFound("virtualmachines", name)
		}).AnyTimes()
	client := kubecli.NewMockKubevirtClient(mc)
	client.EXPECT().VirtualMachineInstance(gomock.Any()).Return(vmis).AnyTimes()
	client.EXPECT().VirtualMachine(gomock.Any()).Return(vms).AnyTimes()
	return client
}

// kopContains: whether an IPPool spec.ips entry (a..b, CIDR or address) holds ip.
func kopContains(entry string, ip net.IP) bool {
	entry = strings.TrimSpace(entry)
	if a, b, ok := strings.Cut(entry, ".."); ok {
		lo, hi := net.ParseIP(a), net.ParseIP(b)
		if lo == nil || hi == nil || (lo.To4() == nil) != (ip.To4() == nil) {
			return false
		}
		v := new(big.Int).SetBytes(ip.To16())
		return v.Cmp(new(big.Int).SetBytes(lo.To16())) >= 0 && v.Cmp(new(big.Int).SetBytes(hi.To16())) <= 0
	}
	if strings.Contains(entry, "/") {
		_, n, err := net.ParseCIDR(entry)
		return err == nil && n.Contains(ip)
	}
	e := net.ParseIP(entry)
	return e != nil && e.Equal(ip)
}

func kopAddrs(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func kopSameIP(a, b string) bool {
	x, y := net.ParseIP(a), net.ParseIP(b)
	return x != nil && y != nil && x.Equal(y)
}

func kopUnique(in []string) []string {
	sort.Strings(in)
	out := in[:0]
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// kopFlags judges one allocated NIC against the cluster as it was before the run.
func kopFlags(nic *kopNic, pod *corev1.Pod, ownName string, k *kopCluster) {
	ownKey := pod.Namespace + "/" + ownName
	for _, addr := range kopAddrs(nic.IP) {
		ip := net.ParseIP(addr)
		if ip == nil {
			continue
		}
		ownAlready := false // the pod's own IP object held the address before the run
		for _, o := range k.ips {
			if o.Spec.Subnet != nic.Subnet || o.DeletionTimestamp != nil {
				continue
			}
			held := false
			for _, h := range append(kopAddrs(o.Spec.IPAddress), o.Spec.V4IPAddress, o.Spec.V6IPAddress) {
				if kopSameIP(h, addr) {
					held = true
				}
			}
			if held && o.Spec.Namespace+"/"+o.Spec.PodName == ownKey {
				ownAlready = true
			}
			if held && o.Spec.Namespace+"/"+o.Spec.PodName != ownKey {
				nic.Flags = append(nic.Flags, "second_holder")
				nic.Why = append(nic.Why, fmt.Sprintf("%s held by IP %s (%s/%s)", addr, o.Name, o.Spec.Namespace, o.Spec.PodName))
			}
		}
		named := strings.TrimSpace(pod.Annotations[nic.Provider+".kubernetes.io/ip_pool"])
		for _, p := range k.ippools {
			// The pool of the NIC's subnet, or the pool the NIC names: an address taken from a
			// named pool comes from the pool's subnet whatever subnet the NIC is annotated with.
			if (p.Spec.Subnet != nic.Subnet && p.Name != named) || len(p.Spec.Namespaces) == 0 {
				continue
			}
			listed := false
			for _, ns := range p.Spec.Namespaces {
				if ns == pod.Namespace {
					listed = true
				}
			}
			if listed {
				continue
			}
			for _, e := range p.Spec.IPs {
				if kopContains(e, ip) {
					nic.Flags = append(nic.Flags, "reserved_pool")
					nic.Why = append(nic.Why, fmt.Sprintf("%s in ippool %s for %s", addr, p.Name, strings.Join(p.Spec.Namespaces, ",")))
					break
				}
			}
		}
		for _, v := range k.vips {
			if v.Spec.Namespace == "" || v.Spec.Namespace == pod.Namespace {
				continue
			}
			// The Vip's address in another subnet (another network, maybe
			// another Vpc) is not the Vip's, unless the pod named the Vip
			// (ovn.kubernetes.io/vip), which gives a NIC its address in
			// whatever subnet the NIC is in.
			named := pod.Annotations["ovn.kubernetes.io/vip"] == v.Name
			if v.Spec.Subnet != "" && v.Spec.Subnet != nic.Subnet && !named {
				continue
			}
			// An address the pod's own IP object held before the run is the pod's
			// (a cluster where a Vip shares it was so before the request).
			if ownAlready && !named {
				continue
			}
			for _, h := range []string{v.Status.V4ip, v.Status.V6ip, v.Spec.V4ip, v.Spec.V6ip} {
				if kopSameIP(h, addr) {
					nic.Flags = append(nic.Flags, "foreign_vip")
					nic.Why = append(nic.Why, fmt.Sprintf("%s is vip %s of namespace %s", addr, v.Name, v.Spec.Namespace))
					break
				}
			}
		}
	}
	nic.Flags = kopUnique(nic.Flags)
	nic.Why = kopUnique(nic.Why)
}

// kopPanicSite: the first frame of the stack outside this file and the runtime.
func kopPanicSite(stack string) string {
	lines := strings.Split(stack, "\n")
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "/") && !strings.Contains(l, ".go:") {
			continue
		}
		if strings.Contains(l, "/runtime/") || strings.Contains(l, "zz_kop_allocator_diff_test.go") ||
			strings.Contains(l, "runtime/debug") || strings.Contains(l, "testing/") {
			continue
		}
		if i := strings.LastIndex(l, "/"); i >= 0 {
			l = l[i+1:]
		}
		if i := strings.Index(l, " +0x"); i >= 0 {
			l = l[:i]
		}
		return l
	}
	return "?"
}

func kopRun(t *testing.T, c *kopCase, k *kopCluster, pod, old *corev1.Pod) (out kopOutcome) {
	pods := append([]*corev1.Pod{}, k.pods...)
	pods = append(pods, pod.DeepCopy())
	fc, err := newFakeControllerWithOptions(t, &FakeControllerOptions{
		Subnets:            k.subnets,
		IPs:                k.ips,
		NetworkAttachments: k.nads,
		Pods:               pods,
		Namespaces:         k.namespaces,
	})
	if err != nil {
		return kopOutcome{Flags: []string{"error: harness: " + err.Error()}}
	}
	ctrl := fc.fakeController
	kopPermissive(fc.mockOvnClient)
	kopPermissive(fc.mockOvnSbClient)

	// What the fake leaves out in some releases: IPPools, Vips, Vpcs, and the listers and queues
	// the pod event handlers touch.
	kc := ctrl.config.KubeOvnClient
	for _, p := range k.ippools {
		if _, err := kc.KubeovnV1().IPPools().Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			return kopOutcome{Flags: []string{"error: harness: ippool: " + err.Error()}}
		}
	}
	for _, v := range k.vips {
		if _, err := kc.KubeovnV1().Vips().Create(context.Background(), v, metav1.CreateOptions{}); err != nil {
			return kopOutcome{Flags: []string{"error: harness: vip: " + err.Error()}}
		}
	}
	for _, v := range k.vpcs {
		if _, err := kc.KubeovnV1().Vpcs().Create(context.Background(), v, metav1.CreateOptions{}); err != nil {
			return kopOutcome{Flags: []string{"error: harness: vpc: " + err.Error()}}
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	kf := kubeovninformerfactory.NewSharedInformerFactory(kc, 0)
	ctrl.ippoolLister = kf.Kubeovn().V1().IPPools().Lister()
	ctrl.virtualIpsLister = kf.Kubeovn().V1().Vips().Lister()
	ctrl.vpcsLister = kf.Kubeovn().V1().Vpcs().Lister()
	ctrl.vpcEgressGatewayLister = kf.Kubeovn().V1().VpcEgressGateways().Lister()
	ctrl.iptablesEipsLister = kf.Kubeovn().V1().IptablesEIPs().Lister()
	ctrl.ovnEipsLister = kf.Kubeovn().V1().OvnEips().Lister()
	cf := informers.NewSharedInformerFactory(ctrl.config.KubeClient, 0)
	ctrl.servicesLister = cf.Core().V1().Services().Lister()
	ctrl.endpointSlicesLister = cf.Discovery().V1().EndpointSlices().Lister()
	ctrl.nodesLister = cf.Core().V1().Nodes().Lister()
	kf.Start(stop)
	cf.Start(stop)
	kf.WaitForCacheSync(stop)
	cf.WaitForCacheSync(stop)

	ctrl.addOrUpdatePodQueue = newTypedRateLimitingQueue[string]("AddOrUpdatePod", nil)
	ctrl.deletePodQueue = newTypedRateLimitingQueue[string]("DeletePod", nil)
	ctrl.updatePodSecurityQueue = newTypedRateLimitingQueue[string]("UpdatePodSecurity", nil)
	ctrl.addOrUpdateVpcEgressGatewayQueue = newTypedRateLimitingQueue[string]("AddOrUpdateVpcEgressGateway", nil)
	ctrl.updateVirtualParentsQueue = newTypedRateLimitingQueue[string]("UpdateVirtualParents", nil)
	ctrl.addOrUpdateEndpointSliceQueue = newTypedRateLimitingQueue[string]("AddOrUpdateEndpointSlice", nil)
	ctrl.syncSgPortsQueue = newTypedRateLimitingQueue[string]("SyncSgPorts", nil)
	ctrl.initVpcNatGatewayQueue = newTypedRateLimitingQueue[string]("InitVpcNatGateway", nil)
	ctrl.addOrUpdateVpcNatGatewayQueue = newTypedRateLimitingQueue[string]("AddOrUpdateVpcNatGateway", nil)
	ctrl.updateIPQueue = newTypedRateLimitingQueue[string]("UpdateIP", nil)
	ctrl.updateNpQueue = newTypedRateLimitingQueue[string]("UpdateNp", nil)
	ctrl.deletingPodObjMap = xsync.NewMap[string, *corev1.Pod]()
	// The key mutexes the fakes of v1.16 and v1.15 leave nil.
	ctrl.podKeyMutex = keymutex.NewHashed(0)
	ctrl.nsKeyMutex = keymutex.NewHashed(0)
	ctrl.vpcNatGwKeyMutex = keymutex.NewHashed(0)
	defer func() {
		for _, q := range []interface{ ShutDown() }{ctrl.addOrUpdatePodQueue, ctrl.deletePodQueue,
			ctrl.updatePodSecurityQueue, ctrl.addOrUpdateVpcEgressGatewayQueue, ctrl.updateVirtualParentsQueue,
			ctrl.addOrUpdateEndpointSliceQueue, ctrl.syncSgPortsQueue, ctrl.initVpcNatGatewayQueue,
			ctrl.addOrUpdateVpcNatGatewayQueue, ctrl.updateIPQueue, ctrl.updateNpQueue} {
			q.ShutDown()
		}
	}()
	// The StatefulSet a pod's owner reference names exists (10 replicas), so the controller keeps
	// the pod instead of taking it for a scaled-down or deleted set's.
	for _, o := range pod.OwnerReferences {
		if o.Kind == "StatefulSet" && strings.HasPrefix(o.APIVersion, "apps/") {
			replicas := int32(10)
			sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: pod.Namespace, UID: o.UID},
				Spec: appsv1.StatefulSetSpec{Replicas: &replicas}}
			_, _ = ctrl.config.KubeClient.AppsV1().StatefulSets(pod.Namespace).Create(context.Background(), sts, metav1.CreateOptions{})
		}
	}
	ctrl.config.EnableKeepVMIP = true
	ctrl.config.PodNicType = "veth-pair"
	ctrl.config.KubevirtClient = kopKubevirt(gomock.NewController(t))

	// The IPAM as InitIPAM fills it.
	for _, s := range k.subnets {
		_ = ctrl.ipam.AddOrUpdateSubnet(s.Name, s.Spec.CIDRBlock, s.Spec.Gateway, s.Spec.ExcludeIps)
	}
	for _, p := range k.ippools {
		_ = ctrl.ipam.AddOrUpdateIPPool(p.Spec.Subnet, p.Name, p.Spec.IPs)
	}
	for _, ip := range k.ips {
		if ip.DeletionTimestamp != nil {
			continue
		}
		key := ip.Spec.Namespace + "/" + ip.Spec.PodName
		if ip.Spec.Namespace == "" {
			key = ip.Spec.PodName
		}
		mac := ip.Spec.MacAddress
		_, _, _, _ = ctrl.ipam.GetStaticAddress(key, ip.Name, ip.Spec.IPAddress, &mac, ip.Spec.Subnet, true)
	}
	providers := map[string]string{}
	for _, s := range k.subnets {
		providers[s.Name] = s.Spec.Provider
	}
	for _, v := range k.vips {
		provider, ok := providers[v.Spec.Subnet]
		if !ok {
			continue
		}
		mac := v.Status.Mac
		port := ovs.PodNameToPortName(v.Name, v.Spec.Namespace, provider)
		_, _, _, _ = ctrl.ipam.GetStaticAddress(v.Name, port, v.Status.V4ip, &mac, v.Spec.Subnet, true)
	}

	// The pod's annotation patches, as the controller sends them.
	var patches []map[string]any
	ctrl.config.KubeClient.(*fake.Clientset).PrependReactor("patch", "pods",
		func(a k8stesting.Action) (bool, runtime.Object, error) {
			pa := a.(k8stesting.PatchAction)
			var p struct {
				Metadata struct {
					Annotations map[string]any `json:"annotations"`
				} `json:"metadata"`
			}
			if json.Unmarshal(pa.GetPatch(), &p) == nil && pa.GetName() == pod.Name {
				patches = append(patches, p.Metadata.Annotations)
			}
			return false, nil, nil
		})

	var handleErr error
	enqueued := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				out.Flags = append(out.Flags, "panic")
				out.Why = append(out.Why, fmt.Sprintf("panic: %v at %s", r, kopPanicSite(string(debug.Stack()))))
			}
		}()
		if old != nil {
			ctrl.enqueueUpdatePod(old, pod)
		} else {
			ctrl.enqueueAddPod(pod)
		}
		want := pod.Namespace + "/" + pod.Name
		for ctrl.addOrUpdatePodQueue.Len() > 0 {
			key, _ := ctrl.addOrUpdatePodQueue.Get()
			ctrl.addOrUpdatePodQueue.Done(key)
			if key == want {
				enqueued = true
			}
		}
		if enqueued {
			handleErr = ctrl.handleAddOrUpdatePod(want)
		}
	}()

	ownName := ctrl.getNameByPod(pod)
	byProvider := map[string]*kopNic{}
	for _, p := range patches {
		for key, v := range p {
			provider, ok := strings.CutSuffix(key, ".kubernetes.io/allocated")
			if !ok || v != "true" {
				continue
			}
			nic := &kopNic{Provider: provider}
			if s, ok := p[provider+".kubernetes.io/ip_address"].(string); ok {
				nic.IP = s
			}
			if s, ok := p[provider+".kubernetes.io/logical_switch"].(string); ok {
				nic.Subnet = s
			} else {
				name := ovs.PodNameToPortName(ownName, pod.Namespace, provider)
				if ip, err := kc.KubeovnV1().IPs().Get(context.Background(), name, metav1.GetOptions{}); err == nil {
					nic.Subnet = ip.Spec.Subnet
				}
			}
			byProvider[provider] = nic
		}
	}
	for _, nic := range byProvider {
		kopFlags(nic, pod, ownName, k)
		out.Nics = append(out.Nics, *nic)
		out.Flags = append(out.Flags, nic.Flags...)
	}
	sort.Slice(out.Nics, func(i, j int) bool { return out.Nics[i].Provider < out.Nics[j].Provider })
	if len(out.Nics) == 0 && !kopHas(out.Flags, "panic") {
		if handleErr != nil {
			out.Flags = append(out.Flags, "error: "+handleErr.Error())
		} else {
			out.Flags = append(out.Flags, "nothing")
		}
	}
	if out.Nics == nil {
		out.Nics = []kopNic{}
	}
	out.Flags = kopUnique(out.Flags)
	if out.Flags == nil {
		out.Flags = []string{}
	}
	return out
}

func kopHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestKopAllocatorDiff(t *testing.T) {
	casesPath := os.Getenv("KOP_ALLOCATOR_CASES")
	if casesPath == "" {
		t.Skip("KOP_ALLOCATOR_CASES names no cases file")
	}
	outPath := os.Getenv("KOP_ALLOCATOR_OUT")
	if outPath == "" {
		outPath = casesPath + ".out.json"
	}
	orders := 20
	if s := os.Getenv("KOP_ALLOCATOR_ORDERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KOP_ALLOCATOR_ORDERS=%q: not a positive number", s)
		}
		orders = n
	}
	// The NAD fake client has no WatchList semantics (the package's TestMain sets this where it has one).
	_ = os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)

	data, err := os.ReadFile(casesPath)
	if err != nil {
		t.Fatal(err)
	}
	var cases []kopCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", casesPath, err)
	}
	results := map[string][]json.RawMessage{}
	start := time.Now()
	for _, c := range cases {
		seen := map[string]bool{}
		record := func(o any) {
			b, _ := json.Marshal(o)
			seen[string(b)] = true
		}
		k, err := kopParseCluster(c.Cluster)
		pod, perr := kopPod(c.Request.Object, &c)
		old, oerr := kopPod(c.Request.OldObject, &c)
		switch {
		case err != nil:
			record(kopOutcome{Nics: []kopNic{}, Flags: []string{"error: harness: cluster: " + err.Error()}})
		case perr != nil || pod == nil:
			record(kopOutcome{Nics: []kopNic{}, Flags: []string{fmt.Sprintf("error: harness: object: %v", perr)}})
		case oerr != nil:
			record(kopOutcome{Nics: []kopNic{}, Flags: []string{"error: harness: oldObject: " + oerr.Error()}})
		default:
			if c.Request.Operation != "UPDATE" {
				old = nil
			} else if old == nil {
				old = pod.DeepCopy()
			}
			if old != nil {
				// enqueueUpdatePod ignores an event whose resourceVersion did not change.
				old.ResourceVersion, pod.ResourceVersion = "1", "2"
			}
			for i := 0; i < orders; i++ {
				t.Run(fmt.Sprintf("%s/%d", c.Name, i), func(t *testing.T) {
					record(kopRun(t, &c, k, pod.DeepCopy(), old.DeepCopy()))
				})
			}
		}
		keys := make([]string, 0, len(seen))
		for s := range seen {
			keys = append(keys, s)
		}
		sort.Strings(keys)
		for _, s := range keys {
			results[c.Name] = append(results[c.Name], json.RawMessage(s))
		}
	}
	b, err := json.MarshalIndent(results, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("kop allocator: %d cases, %d orders each, %s", len(cases), orders, time.Since(start).Round(time.Millisecond))
}
