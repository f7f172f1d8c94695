/* commbench's MPI call logger for the collectives (not OSU's code): preloaded into the
 * unmodified OMB binaries, it writes every collective (and its _init form), MPI_Start,
 * MPI_Wait, MPI_Barrier and MPI_Wtime with counts, displacements, op and root to
 * /tmp/osutrace/out.<rank> (tests/data/osu/README.md, "Blocking and persistent collectives"). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static FILE *f;
static void open_f(void){ if(!f){int r; PMPI_Comm_rank(MPI_COMM_WORLD,&r); char n[64]; snprintf(n,64,"/tmp/osutrace/out.%d",r); f=fopen(n,"w");}}
#define LOG(...) do{ if(f) fprintf(f, __VA_ARGS__);}while(0)
static int ts(MPI_Datatype t){int s; PMPI_Type_size(t,&s); return s;}
static const char *op(MPI_Op o){return o==MPI_SUM?"SUM":o==MPI_MAX?"MAX":o==MPI_MIN?"MIN":"op";}
int MPI_Init(int *a, char ***b){int r=PMPI_Init(a,b); open_f(); return r;}
int MPI_Init_thread(int *a, char ***b, int q, int *p){int r=PMPI_Init_thread(a,b,q,p); open_f(); return r;}
int MPI_Send(const void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm){LOG("Send %d %d tag%d\n",c*ts(t),d,tag);return PMPI_Send(buf,c,t,d,tag,comm);}
int MPI_Recv(void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Status *st){LOG("Recv %d %d tag%d\n",c*ts(t),d,tag);return PMPI_Recv(buf,c,t,d,tag,comm,st);}
int MPI_Wait(MPI_Request*q,MPI_Status*s){LOG("Wait\n");return PMPI_Wait(q,s);}
int MPI_Start(MPI_Request*q){LOG("Start\n");return PMPI_Start(q);}
int MPI_Request_free(MPI_Request*q){LOG("Request_free\n");return PMPI_Request_free(q);}
int MPI_Barrier(MPI_Comm c){LOG("Barrier%s\n", c==MPI_COMM_WORLD?"":" (other comm)");return PMPI_Barrier(c);}
int MPI_Barrier_init(MPI_Comm c, MPI_Info i, MPI_Request *q){LOG("Barrier_init\n");return PMPI_Barrier_init(c,i,q);}
double MPI_Wtime(void){LOG("Wtime\n");return PMPI_Wtime();}
int MPI_Reduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,int r,MPI_Comm m){LOG("Reduce %d x%d %s root%d%s\n",c,ts(t),op(o),r,a==MPI_IN_PLACE?" inplace":"");return PMPI_Reduce(a,b,c,t,o,r,m);}
int MPI_Reduce_init(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,int r,MPI_Comm m,MPI_Info i,MPI_Request*q){LOG("Reduce_init %d x%d %s root%d\n",c,ts(t),op(o),r);return PMPI_Reduce_init(a,b,c,t,o,r,m,i,q);}
int MPI_Allreduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m){LOG("Allreduce %d x%d %s%s\n",c,ts(t),op(o),a==MPI_IN_PLACE?" inplace":"");return PMPI_Allreduce(a,b,c,t,o,m);}
int MPI_Allreduce_init(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m,MPI_Info i,MPI_Request*q){LOG("Allreduce_init %d x%d %s\n",c,ts(t),op(o));return PMPI_Allreduce_init(a,b,c,t,o,m,i,q);}
int MPI_Gather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m){LOG("Gather %d x%d -> %d root%d\n",c,ts(t),c2,r);return PMPI_Gather(a,c,t,b,c2,t2,r,m);}
int MPI_Gather_init(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m,MPI_Info i,MPI_Request*q){LOG("Gather_init %d x%d -> %d root%d\n",c,ts(t),c2,r);return PMPI_Gather_init(a,c,t,b,c2,t2,r,m,i,q);}
int MPI_Gatherv(const void*a,int c,MPI_Datatype t,void*b,const int*rc,const int*d,MPI_Datatype t2,int r,MPI_Comm m){int p;PMPI_Comm_size(m,&p);LOG("Gatherv %d x%d root%d rc/d:",c,ts(t),r);if(rc)for(int k=0;k<p;k++)LOG(" %d/%d",rc[k],d[k]);LOG("\n");return PMPI_Gatherv(a,c,t,b,rc,d,t2,r,m);}
int MPI_Gatherv_init(const void*a,int c,MPI_Datatype t,void*b,const int*rc,const int*d,MPI_Datatype t2,int r,MPI_Comm m,MPI_Info i,MPI_Request*q){int p;PMPI_Comm_size(m,&p);LOG("Gatherv_init %d x%d root%d rc/d:",c,ts(t),r);if(rc)for(int k=0;k<p;k++)LOG(" %d/%d",rc[k],d[k]);LOG("\n");return PMPI_Gatherv_init(a,c,t,b,rc,d,t2,r,m,i,q);}
int MPI_Scatter(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m){LOG("Scatter %d x%d -> %d root%d\n",c,ts(t),c2,r);return PMPI_Scatter(a,c,t,b,c2,t2,r,m);}
int MPI_Scatter_init(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m,MPI_Info i,MPI_Request*q){LOG("Scatter_init %d x%d -> %d root%d\n",c,ts(t),c2,r);return PMPI_Scatter_init(a,c,t,b,c2,t2,r,m,i,q);}
int MPI_Scatterv(const void*a,const int*sc,const int*d,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m){int p;PMPI_Comm_size(m,&p);LOG("Scatterv -> %d x%d root%d sc/d:",c2,ts(t2),r);if(sc)for(int k=0;k<p;k++)LOG(" %d/%d",sc[k],d[k]);LOG("\n");return PMPI_Scatterv(a,sc,d,t,b,c2,t2,r,m);}
int MPI_Scatterv_init(const void*a,const int*sc,const int*d,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m,MPI_Info i,MPI_Request*q){int p;PMPI_Comm_size(m,&p);LOG("Scatterv_init -> %d x%d root%d sc/d:",c2,ts(t2),r);if(sc)for(int k=0;k<p;k++)LOG(" %d/%d",sc[k],d[k]);LOG("\n");return PMPI_Scatterv_init(a,sc,d,t,b,c2,t2,r,m,i,q);}
int MPI_Bcast(void*a,int c,MPI_Datatype t,int r,MPI_Comm m){LOG("Bcast %d x%d root%d\n",c,ts(t),r);return PMPI_Bcast(a,c,t,r,m);}
int MPI_Bcast_init(void*a,int c,MPI_Datatype t,int r,MPI_Comm m,MPI_Info i,MPI_Request*q){LOG("Bcast_init %d x%d root%d\n",c,ts(t),r);return PMPI_Bcast_init(a,c,t,r,m,i,q);}
int MPI_Allgather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m){LOG("Allgather %d x%d -> %d%s\n",c,ts(t),c2,a==MPI_IN_PLACE?" inplace":"");return PMPI_Allgather(a,c,t,b,c2,t2,m);}
int MPI_Allgather_init(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m,MPI_Info i,MPI_Request*q){LOG("Allgather_init %d x%d -> %d\n",c,ts(t),c2);return PMPI_Allgather_init(a,c,t,b,c2,t2,m,i,q);}
int MPI_Allgatherv(const void*a,int c,MPI_Datatype t,void*b,const int*rc,const int*d,MPI_Datatype t2,MPI_Comm m){int p;PMPI_Comm_size(m,&p);LOG("Allgatherv %d x%d rc/d:",c,ts(t));for(int k=0;k<p;k++)LOG(" %d/%d",rc[k],d[k]);LOG("\n");return PMPI_Allgatherv(a,c,t,b,rc,d,t2,m);}
int MPI_Allgatherv_init(const void*a,int c,MPI_Datatype t,void*b,const int*rc,const int*d,MPI_Datatype t2,MPI_Comm m,MPI_Info i,MPI_Request*q){int p;PMPI_Comm_size(m,&p);LOG("Allgatherv_init %d x%d rc/d:",c,ts(t));for(int k=0;k<p;k++)LOG(" %d/%d",rc[k],d[k]);LOG("\n");return PMPI_Allgatherv_init(a,c,t,b,rc,d,t2,m,i,q);}
int MPI_Alltoall(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m){LOG("Alltoall %d x%d -> %d\n",c,ts(t),c2);return PMPI_Alltoall(a,c,t,b,c2,t2,m);}
int MPI_Alltoall_init(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m,MPI_Info i,MPI_Request*q){LOG("Alltoall_init %d x%d -> %d\n",c,ts(t),c2);return PMPI_Alltoall_init(a,c,t,b,c2,t2,m,i,q);}
int MPI_Alltoallv(const void*a,const int*sc,const int*sd,MPI_Datatype t,void*b,const int*rc,const int*rd,MPI_Datatype t2,MPI_Comm m){int p;PMPI_Comm_size(m,&p);LOG("Alltoallv x%d sc/sd/rc/rd:",ts(t));for(int k=0;k<p;k++)LOG(" %d/%d/%d/%d",sc[k],sd[k],rc[k],rd[k]);LOG("\n");return PMPI_Alltoallv(a,sc,sd,t,b,rc,rd,t2,m);}
int MPI_Alltoallv_init(const void*a,const int*sc,const int*sd,MPI_Datatype t,void*b,const int*rc,const int*rd,MPI_Datatype t2,MPI_Comm m,MPI_Info i,MPI_Request*q){int p;PMPI_Comm_size(m,&p);LOG("Alltoallv_init x%d sc/sd/rc/rd:",ts(t));for(int k=0;k<p;k++)LOG(" %d/%d/%d/%d",sc[k],sd[k],rc[k],rd[k]);LOG("\n");return PMPI_Alltoallv_init(a,sc,sd,t,b,rc,rd,t2,m,i,q);}
int MPI_Alltoallw(const void*a,const int*sc,const int*sd,const MPI_Datatype*st,void*b,const int*rc,const int*rd,const MPI_Datatype*rt,MPI_Comm m){int p;PMPI_Comm_size(m,&p);LOG("Alltoallw sc/sd(bytes)/rc/rd x type:");for(int k=0;k<p;k++)LOG(" %d/%d/%d/%d x%d",sc[k],sd[k],rc[k],rd[k],ts(st[k]));LOG("\n");return PMPI_Alltoallw(a,sc,sd,st,b,rc,rd,rt,m);}
int MPI_Alltoallw_init(const void*a,const int*sc,const int*sd,const MPI_Datatype*st,void*b,const int*rc,const int*rd,const MPI_Datatype*rt,MPI_Comm m,MPI_Info i,MPI_Request*q){int p;PMPI_Comm_size(m,&p);LOG("Alltoallw_init:");for(int k=0;k<p;k++)LOG(" %d/%d/%d/%d x%d",sc[k],sd[k],rc[k],rd[k],ts(st[k]));LOG("\n");return PMPI_Alltoallw_init(a,sc,sd,st,b,rc,rd,rt,m,i,q);}
int MPI_Reduce_scatter(const void*a,void*b,const int*rc,MPI_Datatype t,MPI_Op o,MPI_Comm m){int p;PMPI_Comm_size(m,&p);LOG("Reduce_scatter x%d %s rc:",ts(t),op(o));for(int k=0;k<p;k++)LOG(" %d",rc[k]);LOG("\n");return PMPI_Reduce_scatter(a,b,rc,t,o,m);}
int MPI_Reduce_scatter_init(const void*a,void*b,const int*rc,MPI_Datatype t,MPI_Op o,MPI_Comm m,MPI_Info i,MPI_Request*q){int p;PMPI_Comm_size(m,&p);LOG("Reduce_scatter_init x%d %s rc:",ts(t),op(o));for(int k=0;k<p;k++)LOG(" %d",rc[k]);LOG("\n");return PMPI_Reduce_scatter_init(a,b,rc,t,o,m,i,q);}
int MPI_Reduce_scatter_block(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m){LOG("Reduce_scatter_block %d x%d %s\n",c,ts(t),op(o));return PMPI_Reduce_scatter_block(a,b,c,t,o,m);}
int MPI_Finalize(void){if(f)fclose(f);f=0;return PMPI_Finalize();}
