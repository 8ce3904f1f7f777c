// Package plugins assembles the in-tree plugins.
package plugins

import (
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/defaultbinder"
	"github.com/kubesched/kubesched/pkg/plugins/defaultpreemption"
	"github.com/kubesched/kubesched/pkg/plugins/dynamicresources"
	"github.com/kubesched/kubesched/pkg/plugins/imagelocality"
	"github.com/kubesched/kubesched/pkg/plugins/interpodaffinity"
	"github.com/kubesched/kubesched/pkg/plugins/nodeaffinity"
	"github.com/kubesched/kubesched/pkg/plugins/nodedeclaredfeatures"
	"github.com/kubesched/kubesched/pkg/plugins/nodename"
	"github.com/kubesched/kubesched/pkg/plugins/nodeports"
	"github.com/kubesched/kubesched/pkg/plugins/noderesources"
	"github.com/kubesched/kubesched/pkg/plugins/nodeunschedulable"
	"github.com/kubesched/kubesched/pkg/plugins/nodevolumelimits"
	"github.com/kubesched/kubesched/pkg/plugins/podtopologyspread"
	"github.com/kubesched/kubesched/pkg/plugins/queuesort"
	"github.com/kubesched/kubesched/pkg/plugins/schedulinggates"
	"github.com/kubesched/kubesched/pkg/plugins/tainttoleration"
	"github.com/kubesched/kubesched/pkg/plugins/volumebinding"
	"github.com/kubesched/kubesched/pkg/plugins/volumerestrictions"
	"github.com/kubesched/kubesched/pkg/plugins/volumezone"
)

// NewInTreeRegistry returns every in-tree plugin by its upstream name.
func NewInTreeRegistry() framework.Registry {
	return framework.Registry{
		schedulinggates.Name:                 schedulinggates.New,
		queuesort.Name:                       queuesort.New,
		nodename.Name:                        nodename.New,
		nodeunschedulable.Name:               nodeunschedulable.New,
		tainttoleration.Name:                 tainttoleration.New,
		nodeaffinity.Name:                    nodeaffinity.New,
		nodeports.Name:                       nodeports.New,
		noderesources.FitName:                noderesources.NewFit,
		noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
		imagelocality.Name:                   imagelocality.New,
		podtopologyspread.Name:               podtopologyspread.New,
		interpodaffinity.Name:                interpodaffinity.New,
		defaultbinder.Name:                   defaultbinder.New,
		volumerestrictions.Name:              volumerestrictions.New,
		nodevolumelimits.Name:                nodevolumelimits.New,
		volumebinding.Name:                   volumebinding.New,
		volumezone.Name:                      volumezone.New,
		dynamicresources.Name:                dynamicresources.New,
		nodedeclaredfeatures.Name:            nodedeclaredfeatures.New,
		defaultpreemption.Name:               defaultpreemption.New,
	}
}
